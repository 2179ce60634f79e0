/**
 * report/notch: a notch's commit is the one git names for that step, and stays right as the
 * agent's branch grows past the walk it remembers.
 */
import { notchCommit } from '../../../proxy/report/notch'
import { stepCommit } from '../../../proxy/store/git'
import { Workspace } from '../../../proxy/store/workspace'
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream'
import { startProxy, type Proxy } from '../../support/harness'
import { KEY_ENV, keyedRows, mainStep, recordDemo, sendStep } from '../../support/view-demo'

let fake: FakeUpstream
let p: Proxy
beforeAll(async () => {
  process.env[KEY_ENV] = 'sk-view'
  fake = await startFakeUpstream()
  p = await startProxy({ fake, config: { providers: keyedRows(fake.anthropicBaseUrl) } })
  await recordDemo(p, 'demo')
})
afterAll(async () => {
  await p.close()
  await fake.close()
})

describe('a notch’s commit', () => {
  it('is the commit git names for that step, and stays right as the branch grows', async () => {
    const ws = new Workspace(p.home, 'demo')
    const want = async (n: number) => (await stepCommit(ws.repo, 'main', n)) as string
    expect(await notchCommit(ws, 'main', 3)).toBe(await want(3))
    await sendStep(p, 'demo', 'main', mainStep(7, ['Read']))
    await p.settled()
    expect(await notchCommit(ws, 'main', 7)).toBe(await want(7))
    expect(await notchCommit(ws, 'main', 1)).toBe(await want(1))
    expect(await notchCommit(ws, 'main', 99)).toBeUndefined()
  })
})
