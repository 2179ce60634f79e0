/**
 * Report-row fixtures for the report's and the view's tests: agent rows (an agents-tree of splits,
 * an orphan and an attempt; a priced, held agent) and a step row.
 */
import type { AgentRow, AttemptOrigin } from '../../proxy/report/agents'
import { agentRow } from '../../proxy/report/agents'
import type { StepRow } from '../../proxy/report/steps'

/** A row of `agent` with one step and nothing else. */
export const agentRowOf = (agent: string): AgentRow => ({ ...agentRow(agent, []), steps: 1 })

/** main with a side request, a subagent (with its own), an attempt from main@002; an orphan split; another main. */
export const treeRows = (): AgentRow[] =>
  [
    'main',
    'main.aux',
    'main.sub-1',
    'main.sub-1.sub-2',
    'main-20260101T000000Z-ab12',
    'orphan.sub-9',
    'other',
  ].map(agentRowOf)

export const treeAttempts = (): Map<string, AttemptOrigin> =>
  new Map([
    [
      'main-20260101T000000Z-ab12',
      { role: 'reviewer', commit: 'c', step: { agent: 'main', n: 2, name: '002' } },
    ],
  ])

/** One agent of one held, priced step (80 % of its input read from the cache), with `over` on top. */
export const pricedAgentRow = (over: Partial<AgentRow> = {}): AgentRow => ({
  agent: 'a',
  parent: null,
  kind: 'main',
  steps: 1,
  first: '2026-01-01T00:00:00Z',
  last: '2026-01-01T00:00:00Z',
  models: ['m'],
  input: 10,
  cache_read: 80,
  cache_write: 10,
  output: 5,
  cost_usd: 0.5,
  unpriced: 0,
  held_steps: 1,
  writes_avoided_tokens: 80,
  saved_usd: 0.1,
  ...over,
})

/** A committed first step that wrote its prefix to the cache, with `over` on top. */
export const stepRowOf = (over: Partial<StepRow> = {}): StepRow => ({
  step: '001',
  time: '2026-01-01T00:00:00Z',
  model: 'm',
  status: 200,
  outcome: 'ok',
  held: [],
  reordered: false,
  hold_reason: 'first-step',
  compaction: null,
  input: 1,
  cache_read: 0,
  cache_write: 900,
  output: 10,
  cost_usd: 0.01,
  saved_usd: 0,
  ttfb_ms: 120,
  total_ms: 300,
  state: 'committed',
  ...over,
})
