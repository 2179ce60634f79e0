/** view/pages/workspaces: a workspace's cache read share and cost as said; an empty home says how to start; each workspace is linked. */
import { type AgentRow, workspaceRow } from '../../../../proxy/report/agents'
import { costText, readShare, workspacesBody } from '../../../../proxy/view/pages/workspaces'
import { serverLinks } from '../../../../proxy/view/links'

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
  it('says its cache read share and its cost with the unpriced steps', () => {
    const w = workspaceRow('w', [agent({}), agent({ agent: 'b', unpriced: 1 })])
    expect(readShare(w)).toBeCloseTo(0.8)
    expect(readShare({ input: 0, cache_read: 0, cache_write: 0 })).toBeNull()
    expect(costText(1, 1)).toBe('$1.00 + 1 unpriced')
  })
})

describe('the workspaces page', () => {
  it('says how a workspace is made when the home has none', () => {
    expect(workspacesBody([], serverLinks).text).toContain('No workspace yet')
  })

  it('links each workspace', () => {
    expect(workspacesBody([workspaceRow('w', [agent({})])], serverLinks).text).toContain(
      '<a href="/ui/w/w">w</a>',
    )
  })
})
