/** report/agent-tree: splits under their parents, attempts under their notch's agent, an orphan at the root, nothing left out. */
import { agentTree } from '../../../proxy/report/agent-tree'
import { treeAttempts, treeRows } from '../../support/agent-rows'

describe('the agents tree (data)', () => {
  it('puts subagents, side requests and sessions under their parent and attempts under their notch', () => {
    const rows = treeRows()
    const attempts = treeAttempts()
    const tree = agentTree(rows, attempts)
    expect(tree.map((n) => `${' '.repeat(n.depth)}${n.row.agent}`)).toEqual([
      'main',
      ' main-20260101T000000Z-ab12',
      ' main.aux',
      ' main.sub-1',
      '  main.sub-1.sub-2',
      'orphan.sub-9',
      'other',
    ])
  })
})
