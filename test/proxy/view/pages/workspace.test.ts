/** view/pages/workspace: the agents tree as rows — indented under their parents, an attempt linked to its notch's cohort. */
import { agentTree } from '../../../../proxy/report/agent-tree'
import { treeRows as renderTree } from '../../../../proxy/view/pages/workspace'
import { serverLinks } from '../../../../proxy/view/links'
import { treeAttempts, treeRows } from '../../../support/agent-rows'

describe('the agents tree', () => {
  it('links an attempt to its notch’s cohort (the tree’s order: test/proxy/report/agent-tree.test.ts)', () => {
    const rows = treeRows()
    const tree = agentTree(rows, treeAttempts())
    const html = renderTree({ ws: 'w', rows, nodes: tree }, serverLinks).text
    expect(html).toMatch(/reviewer from\s+<a href="\/ui\/w\/w\/cohort\/main@002">main@002<\/a>/)
  })
})
