/** view/pages/workspaces: a workspace's row is the sum of its agents' rows; an empty home says how to start. */
import fs from 'node:fs'
import type { AgentRow } from '../../../../proxy/report/agents'
import {
  costText,
  readShare,
  workspaceRow,
  workspaceRows,
  workspacesBody,
} from '../../../../proxy/view/pages/workspaces'
import { serverLinks } from '../../../../proxy/view/links'
import { tempHome } from '../../../support/harness'

const agent = (over: Partial<AgentRow>): AgentRow => ({
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

describe('a workspace’s row', () => {
  it('sums its agents and keeps the latest activity', () => {
    const w = workspaceRow('w', [
      agent({}),
      agent({ agent: 'b', steps: 2, last: '2026-02-01T00:00:00Z', unpriced: 1 }),
    ])
    expect(w).toMatchObject({
      agents: 2,
      steps: 3,
      last: '2026-02-01T00:00:00Z',
      input: 20,
      cache_read: 160,
      cost_usd: 1,
      unpriced: 1,
      held_steps: 2,
    })
    expect(readShare(w)).toBeCloseTo(0.8)
    expect(readShare({ input: 0, cache_read: 0, cache_write: 0 })).toBeNull()
    expect(costText(1, 1)).toBe('$1.00 + 1 unpriced')
  })
})

describe('the workspaces page', () => {
  it('says how a workspace is made when the home has none', async () => {
    const home = tempHome()
    try {
      expect(await workspaceRows(home)).toEqual([])
      expect(workspacesBody([], serverLinks).text).toContain('No workspace yet')
    } finally {
      fs.rmSync(home, { recursive: true, force: true })
    }
  })

  it('links each workspace', () => {
    expect(workspacesBody([workspaceRow('w', [agent({})])], serverLinks).text).toContain(
      '<a href="/ui/w/w">w</a>',
    )
  })
})
