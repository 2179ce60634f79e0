/**
 * view/pages/step: a step's data from the record — why (as `holdfast why`), the diff against the
 * previous step, the transcript with what the previous step sent folded, the answer rebuilt; an
 * export links the previous step's system instead of repeating it.
 */
import { why } from '../../../../proxy/report/why'
import { Workspace } from '../../../../proxy/store/workspace'
import { exportLinks, serverLinks } from '../../../../proxy/view/links'
import { stepBody, stepData } from '../../../../proxy/view/pages/step'
import { startProxy, type Proxy } from '../../../support/harness'
import { mainStep, sendStep } from '../../../support/view-demo'

let p: Proxy
beforeAll(async () => {
  p = await startProxy()
  await sendStep(p, 'w', 'main', mainStep(1, ['Read', 'Write']))
  await sendStep(p, 'w', 'main', mainStep(3, ['Read']))
  await p.settled()
})
afterAll(() => p.close())

describe('a step page', () => {
  it('says why in the words of holdfast why, and what changed since the previous step', async () => {
    const d = await stepData(new Workspace(p.home, 'w'), 'main', 2)
    expect(d.why).toEqual(await why(p.home, 'w', 'main', '002'))
    // The diff compares what was sent: the hold re-sent 001's tools, so they did not change.
    expect(d.diff?.tools).toMatchObject({ previous: 2, current: 2, removed: [] })
    expect(d.diff?.messages).toMatchObject({ previous: 1, current: 5, common: 1, added: 4 })
    expect(d.reply?.text).toEqual(expect.any(String))
    expect(d.committed).toBe(true)
    const html = stepBody(d, serverLinks).text
    expect(html).toContain('the client dropped Write; the hold re-sent step 001&#39;s array')
    expect(html).not.toContain('changed <code>tools</code>: hold:')
    expect(html).toContain('1 earlier messages, as step 001 sent them')
    expect(html).toContain('href="/ui/w/w/a/main/s/002/raw/request.json"')
  })

  it('gives a held step’s diff both sides: what went upstream, and what the client sent', async () => {
    const d = await stepData(new Workspace(p.home, 'w'), 'main', 2)
    const html = stepBody(d, serverLinks).text.replace(/\s+/g, ' ')
    expect(html).toContain('tools sent upstream (2 → 2): unchanged')
    expect(html).toContain(
      "tools the client sent (2 → 1): dropped <code>Write</code>; the hold re-sent step 001's array",
    )
    expect(html).toContain('data-cause="held"')
  })

  it('in an export, links the previous step for its unchanged system and earlier messages', async () => {
    const d = await stepData(new Workspace(p.home, 'w'), 'main', 2)
    const html = stepBody(d, exportLinks).text
    expect(html).toMatch(/\d+ characters, as sent by <a href="#\/w\/w\/a\/main\/s\/001">step 001<\/a>/)
    expect(html).not.toContain('/raw/')
  })

  it('says the first step has nothing to compare', async () => {
    const d = await stepData(new Workspace(p.home, 'w'), 'main', 1)
    expect(d.diff).toBeNull()
    expect(stepBody(d, serverLinks).text).toContain('First step: nothing to compare.')
  })
})
