/**
 * report/step-data: a step's page data from the record — why as `holdfast why` says it, the diff
 * against the previous step (what was sent upstream), the answer rebuilt, committed; the first step
 * has no diff; a step never recorded is NotFound.
 */
import { NotFound } from '../../../proxy/report/lookup'
import { stepData } from '../../../proxy/report/step-data'
import { why } from '../../../proxy/report/why'
import { Workspace } from '../../../proxy/store/workspace'
import { startProxy, type Proxy } from '../../support/harness'
import { mainStep, sendStep } from '../../support/view-demo'

let p: Proxy
beforeAll(async () => {
  p = await startProxy()
  await sendStep(p, 'w', 'main', mainStep(1, ['Read', 'Write']))
  await sendStep(p, 'w', 'main', mainStep(3, ['Read']))
  await p.settled()
})
afterAll(() => p.close())

describe('a step’s data', () => {
  it('says why in the words of holdfast why, and what changed since the previous step', async () => {
    const d = await stepData(new Workspace(p.home, 'w'), 'main', 2)
    expect(d.why).toEqual(await why(p.home, 'w', 'main', '002'))
    // The diff compares what was sent: the hold re-sent 001's tools, so they did not change.
    expect(d.diff?.tools).toMatchObject({ previous: 2, current: 2, removed: [] })
    expect(d.diff?.messages).toMatchObject({ previous: 1, current: 5, common: 1, added: 4 })
    expect(d.reply?.text).toEqual(expect.any(String))
    expect([d.committed, d.last, d.previous?.n]).toEqual([true, 2, 1])
  })

  it('has nothing to compare for the first step, and no step that was never recorded', async () => {
    const d = await stepData(new Workspace(p.home, 'w'), 'main', 1)
    expect([d.diff, d.previous]).toEqual([null, undefined])
    await expect(stepData(new Workspace(p.home, 'w'), 'main', 9)).rejects.toBeInstanceOf(NotFound)
  })
})
