/** report/cohort: a cohort's rows are its attempts with their role, model, usage and answer; a notch that resolves to nothing is a NotFound. */
import { fireCohort } from '../../../proxy/attempts/fire'
import { cohortReport } from '../../../proxy/report/cohort'
import { NotFound } from '../../../proxy/report/lookup'
import { Workspace } from '../../../proxy/store/workspace'
import { startAttemptsProxy, WS, type AttemptsProxy } from '../attempts/proxy.support'

let a: AttemptsProxy
beforeAll(async () => {
  a = await startAttemptsProxy(2)
  a.fake.enqueue({ text: 'Answer one.', times: 1 })
  await fireCohort(
    a.p.home,
    a.p.server.ctx.config,
    { ws: WS, from: 'main@002', goal: 'Go.', roles: ['writer'], skills: [] },
    'cli',
  )
  await a.p.settled()
})
afterAll(() => a.close())

describe('cohortReport', () => {
  it('lists each attempt with its role, model, outcome, usage and answer', async () => {
    const r = await cohortReport(new Workspace(a.p.home, WS), 'main@002')
    expect(r.members).toEqual([
      expect.objectContaining({
        role: 'writer',
        model: 'claude-opus-4-5',
        outcome: 'ok',
        status: 200,
        answer: 'Answer one.',
      }),
    ])
    expect(r.members[0]?.usage).toMatchObject({ output_tokens: expect.any(Number) })
  })

  it('refuses a notch that resolves to nothing', async () => {
    await expect(cohortReport(new Workspace(a.p.home, WS), 'main@009')).rejects.toBeInstanceOf(NotFound)
  })
})
