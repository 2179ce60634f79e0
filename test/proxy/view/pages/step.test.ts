/**
 * view/pages/step: a step page says why and the diff against the previous step (both sides of a
 * held step's tools), the transcript with what the previous step sent folded, links to the raw
 * files; an export links the previous step's system instead of repeating it.
 */
import { Workspace } from '../../../../proxy/store/workspace'
import { exportLinks, serverLinks } from '../../../../proxy/view/links'
import { stepData } from '../../../../proxy/report/step-data'
import { stepBody } from '../../../../proxy/view/pages/step'
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
    expect(stepBody(d, serverLinks).text).toContain('First step: nothing to compare.')
  })
})
