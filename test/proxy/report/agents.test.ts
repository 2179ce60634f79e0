/** report/agents: an agent's row sums its step records; an attempt's notch is found from its dispatch commit, and a plain agent has none; a workspace's row sums its agents'. */
import fs from 'node:fs'
import { fireCohort } from '../../../proxy/attempts/fire'
import {
  agentRow,
  attemptOrigin,
  workspaceAgentRows,
  workspaceRow,
  workspaceRows,
} from '../../../proxy/report/agents'
import { Workspace } from '../../../proxy/store/workspace'
import { tempHome } from '../../support/harness'
import { startAttemptsProxy, WS, type AttemptsProxy } from '../attempts/proxy.support'
import { pricedAgentRow } from '../../support/agent-rows'

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

describe('a workspace’s row', () => {
  it('sums its agents and keeps the latest activity', () => {
    const w = workspaceRow('w', [
      pricedAgentRow({}),
      pricedAgentRow({ agent: 'b', steps: 2, last: '2026-02-01T00:00:00Z', unpriced: 1 }),
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
  })

  it('lists no workspace for an empty home, and each workspace of a home by name', async () => {
    const home = tempHome()
    try {
      expect(await workspaceRows(home)).toEqual([])
    } finally {
      fs.rmSync(home, { recursive: true, force: true })
    }
    expect((await workspaceRows(a.p.home)).map((w) => [w.ws, w.agents])).toEqual([[WS, 2]])
  })
})
