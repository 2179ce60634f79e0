/** view/pages/workspace: the agents tree as rows — indented under their parents, an attempt linked to its notch's cohort. */
import type { AgentRow, AttemptOrigin } from '../../../../proxy/report/agents'
import { splitOf } from '../../../../proxy/report/agents'
import { agentTree } from '../../../../proxy/report/agent-tree'
import { treeRows } from '../../../../proxy/view/pages/workspace'
import { serverLinks } from '../../../../proxy/view/links'

const row = (agent: string): AgentRow => ({
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

describe('the agents tree', () => {
  it('puts subagents, side requests and sessions under their parent and attempts under their notch', () => {
    const rows = [
      'main',
      'main.aux',
      'main.sub-1',
      'main.sub-1.sub-2',
      'main-20260101T000000Z-ab12',
      'orphan.sub-9',
      'other',
    ].map(row)
    const attempts = new Map<string, AttemptOrigin>([
      [
        'main-20260101T000000Z-ab12',
        { role: 'reviewer', commit: 'c', step: { agent: 'main', n: 2, name: '002' } },
      ],
    ])
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
    const html = treeRows({ ws: 'w', rows, nodes: tree }, serverLinks).text
    expect(html).toMatch(/reviewer from\s+<a href="\/ui\/w\/w\/cohort\/main@002">main@002<\/a>/)
  })
})
