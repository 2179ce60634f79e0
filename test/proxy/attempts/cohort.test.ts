/**
 * proxy/attempts/cohort: a cohort derived from the refs alone. Members of a notch are the agent
 * branches whose own `dispatch: <role> [<child>]` commit has the notch as parent, found under the
 * child's later steps too; a branch merely pointing at a child's commits (another name) is not one;
 * each member is read from its first step (no meta nor answer while that step is not recorded);
 * members are sorted by child; a notch that resolves to nothing is refused naming it.
 */
import { cohortOf } from '../../../proxy/attempts/cohort'
import { createChild, prepareDispatch } from '../../../proxy/attempts/dispatch'
import { fireCohort } from '../../../proxy/attempts/fire'
import { openRepo } from '../../../proxy/store/git'
import { casRef } from '../../../proxy/store/git/refs'
import { Workspace } from '../../../proxy/store/workspace'
import { git } from '../../support/harness'
import { startAttemptsProxy, WS, type AttemptsProxy } from './proxy.support'

let a: AttemptsProxy
let ws: Workspace
let fired: string[] // children fired from main@002
let other: string // the child fired from main@001
let pending: string // a child created at main@002 whose first step was never sent

beforeAll(async () => {
  a = await startAttemptsProxy(3)
  ws = new Workspace(a.p.home, WS)
  const fire = (roles: string[], from: string) =>
    fireCohort(a.p.home, a.p.server.ctx.config, { ws: WS, from, goal: 'Review.', roles, skills: [] }, 'cli')
  a.fake.enqueue({ text: 'First line of the review.\nSecond line.' })
  const results = await fire(['reviewer', 'writer'], 'main@002')
  fired = results.map((r) => r.child as string)
  other = (await fire(['critic'], 'main@001'))[0]?.child as string
  const prepared = await prepareDispatch(a.p.home, a.p.server.ctx.config, {
    role: 'critic',
    ws: WS,
    parent: 'main',
    goal: 'Never sent.',
    from: 'main@002',
    pins: [],
  })
  await createChild(prepared)
  pending = prepared.child
  await a.p.settled()
  // The reviewer's attempt goes on with a second step of its own.
  const reviewer = fired[0] as string
  expect(await a.ask(reviewer, 'and then?')).toBe(200)
  await a.p.settled()
  // Another name for the writer's branch: its dispatch commit names the writer, not this agent.
  const writerTip = git(a.p.repo(WS), 'rev-parse', `agents/${fired[1]}`).trim()
  await casRef(openRepo(a.p.repo(WS)), 'refs/heads/agents/copy', writerTip, null)
})
afterAll(() => a.close())

const notchOf = (ref: string): string => git(a.p.repo(WS), 'rev-parse', ref).trim()

describe('cohortOf', () => {
  it("finds every attempt dispatched from the notch, sorted by child, each with its role and first step's record", async () => {
    const { notch, members } = await cohortOf(ws, 'main@002')
    expect(notch).toBe(notchOf('agents/main~1'))
    const expected = [...fired, pending].sort()
    expect(members.map((m) => m.child)).toEqual(expected)
    const byChild = new Map(members.map((m) => [m.child, m]))
    const [reviewer, writer] = [byChild.get(fired[0]!)!, byChild.get(fired[1]!)!]
    expect([reviewer.role, reviewer.meta?.route.model]).toEqual(['reviewer', 'claude-haiku-4-5'])
    expect([writer.role, writer.meta?.route.model]).toEqual(['writer', 'claude-opus-4-5'])
    for (const m of members) {
      expect(git(a.p.repo(WS), 'log', '-1', '--format=%s %P', m.dispatchCommit).trim()).toBe(
        `dispatch: ${m.role} [${m.child}] ${notch}`,
      )
    }
    // The reviewer's own later step does not hide its dispatch, nor replace its first step's record.
    expect(reviewer.meta?.step).toBe('001')
    const answers = [reviewer.answer, writer.answer].sort()
    expect(answers).toEqual(['First line of the review.\nSecond line.', 'Hello from the fake upstream.'])
  })

  it('lists an attempt whose first step is not recorded without a record or an answer', async () => {
    const { members } = await cohortOf(ws, 'main@002')
    const m = members.find((x) => x.child === pending)
    expect(m).toMatchObject({ role: 'critic', meta: undefined, answer: undefined })
  })

  it("keeps other notches' attempts and branches that only point at an attempt out of the cohort", async () => {
    const at2 = (await cohortOf(ws, 'main@002')).members.map((m) => m.child)
    expect(at2).not.toContain(other)
    expect(at2).not.toContain('copy')
    const at1 = await cohortOf(ws, notchOf('agents/main~2'))
    expect(at1.members.map((m) => [m.child, m.role])).toEqual([[other, 'critic']])
    expect((await cohortOf(ws, 'main@003')).members).toEqual([])
  })

  it('refuses a notch that resolves to nothing, naming it', async () => {
    await expect(cohortOf(ws, 'main@009')).rejects.toThrow(
      '--from main@009: agent "main" has no committed step 009',
    )
  })
})
