/** view/pages/workspaces: a workspace's cache read share and cost as said; an empty home says how to start; each workspace is linked. */
import { workspaceRow } from '../../../../proxy/report/agents'
import { costText, readShare, workspacesBody } from '../../../../proxy/view/pages/workspaces'
import { serverLinks } from '../../../../proxy/view/links'
import { pricedAgentRow } from '../../../support/agent-rows'

describe('a workspace’s row', () => {
  it('says its cache read share and its cost with the unpriced steps', () => {
    const w = workspaceRow('w', [pricedAgentRow({}), pricedAgentRow({ agent: 'b', unpriced: 1 })])
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
    expect(workspacesBody([workspaceRow('w', [pricedAgentRow({})])], serverLinks).text).toContain(
      '<a href="/ui/w/w">w</a>',
    )
  })
})
