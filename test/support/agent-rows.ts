/** An agents-tree fixture for the report's and the view's tests: agent rows by name, splits, an orphan, an attempt. */
import type { AgentRow, AttemptOrigin } from '../../proxy/report/agents'
import { splitOf } from '../../proxy/report/agents'

/** A row of `agent` with one step and nothing else. */
export const agentRowOf = (agent: string): AgentRow => ({
  agent,
  ...splitOf(agent),
  steps: 1,
  first: null,
  last: null,
  models: [],
  input: 0,
  cache_read: 0,
  cache_write: 0,
  output: 0,
  cost_usd: 0,
  unpriced: 0,
  held_steps: 0,
  writes_avoided_tokens: 0,
  saved_usd: 0,
})

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
