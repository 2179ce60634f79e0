/** report/agents: an agent's row sums its step records; an attempt's notch is found from its dispatch commit, and a plain agent has none. */
import { fireCohort } from '../../../proxy/attempts/fire'
import { agentRow, attemptOrigin, workspaceAgentRows } from '../../../proxy/report/agents'
import { Workspace } from '../../../proxy/store/workspace'
import { startAttemptsProxy, WS, type AttemptsProxy } from '../attempts/proxy.support'

let a: AttemptsProxy
let child: string
beforeAll(async () => {
  a = await startAttemptsProxy(2)
  const [r] = await fireCohort(
    a.p.home,
    a.p.server.ctx.config,
    { ws: WS, from: 'main@002', goal: 'Go.', roles: ['reviewer'], skills: [] },
    'cli',
  )
  child = r?.child as string
  await a.p.settled()
})
afterAll(() => a.close())

describe('agent rows', () => {
  it('count no steps and no totals for an agent without records', () => {
    expect(agentRow('x.sub-1', [])).toMatchObject({
      agent: 'x.sub-1',
      parent: 'x',
      kind: 'subagent',
      steps: 0,
      cost_usd: 0,
    })
  })

  it('list every agent with steps, the attempt among them', async () => {
    const rows = await workspaceAgentRows(new Workspace(a.p.home, WS))
    expect(rows.map((r) => [r.agent, r.steps])).toEqual([
      ['main', 2],
      [child, 1],
    ])
  })
})

describe('an attempt’s origin', () => {
  it('is its role and notch step, and a plain agent has none', async () => {
    const ws = new Workspace(a.p.home, WS)
    expect(await attemptOrigin(ws, child)).toMatchObject({
      role: 'reviewer',
      step: { agent: 'main', n: 2, name: '002' },
    })
    expect(await attemptOrigin(ws, 'main')).toBeUndefined()
  })
})
