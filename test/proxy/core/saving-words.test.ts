/**
 * core/saving-words: one vocabulary for what the hold saved. The words themselves (dollars, plural,
 * reason codes in words, a held badge naming its tools), and, on one held step, the same words in
 * `agents`, `steps`, `why`, the status line, the agent page and the export.
 */
import {
  fmtUsd,
  heldWords,
  HOLD_REASON_WORDS,
  HOLD_SAVED,
  noun,
  plural,
  reasonWords,
  savedSentence,
  WRITES_AVOIDED,
} from '../../../proxy/core/saving-words'
import { statusFor, statusText } from '../../../proxy/report/statusline'
import { stepRows } from '../../../proxy/report/steps'
import { Workspace } from '../../../proxy/store/workspace'
import { exportHtml } from '../../../proxy/view/export'
import { agentData } from '../../../proxy/report/timeline'
import { agentSummary, timelineRowsHtml } from '../../../proxy/view/pages/agent'
import { serverLinks } from '../../../proxy/view/links'
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream'
import { startProxy, type Proxy } from '../../support/harness'
import { KEY_ENV, keyedRows, mainStep, sendStep } from '../../support/view-demo'
import { cliInProcess } from '../tools/support'

describe('the words', () => {
  it('give dollars with four decimals under a cent, and the right plural', () => {
    expect([fmtUsd(0.0093), fmtUsd(1.5), fmtUsd(0), fmtUsd(null)]).toEqual(['$0.0093', '$1.50', '$0.00', '-'])
    expect([plural(1, 'held step'), plural(2, 'held step'), plural(1024, 'step')]).toEqual([
      '1 held step',
      '2 held steps',
      '1,024 steps',
    ])
    expect([noun(1, 'agent'), noun(0, 'agent')]).toEqual(['agent', 'agents'])
  })

  it('say a held step’s saving in one sentence and name the tools held', () => {
    expect(savedSentence(3087, 0.0093)).toBe('hold saved $0.0093 (3,087 cache writes the hold avoided)')
    expect(heldWords(['Read', 'Grep'])).toBe('held Read, Grep')
    expect(heldWords(['a', 'b', 'c', 'd'])).toBe('held 4 tools')
    expect(heldWords([], true)).toBe('held (reordered)')
  })

  it('have words for every hold reason, and leave a code they do not know as it is', () => {
    for (const words of Object.values(HOLD_REASON_WORDS)) expect(words).toMatch(/^[a-z][a-z ]+$/)
    expect(reasonWords('no-subtraction')).toBe('same tools')
    expect(reasonWords('some-future-code')).toBe('some-future-code')
    expect(reasonWords(null)).toBe('-')
  })
})

describe('one held step, everywhere', () => {
  let fake: FakeUpstream
  let p: Proxy
  const session = {
    'x-claude-code-session-id': 'sess-words',
    'user-agent': 'claude-cli/2.1.197 (external, cli)',
  }
  beforeAll(async () => {
    process.env[KEY_ENV] = 'sk-view'
    fake = await startFakeUpstream()
    p = await startProxy({ fake, config: { providers: keyedRows(fake.anthropicBaseUrl) } })
    await sendStep(p, 'words', 'main', mainStep(1, ['Read', 'Write', 'notes_search']), session)
    await sendStep(p, 'words', 'main', mainStep(2, ['Read', 'Write']), session)
    await p.settled()
  })
  afterAll(async () => {
    await p.close()
    await fake.close()
  })

  it('is named with the shared words in agents, steps, why, the status line, the agent page and the export', async () => {
    const held = (await stepRows(p.home, 'words', 'main'))[1]!
    expect(held.held).toEqual(['notes_search'])
    expect(held.saved_usd).toBeGreaterThan(0)
    const saved = fmtUsd(held.saved_usd)

    const agents = (await cliInProcess(['agents', 'words', '--home', p.home])).stdout.split('\n')
    expect(agents[0]).toMatch(new RegExp(`${WRITES_AVOIDED} +${HOLD_SAVED}$`))
    expect(agents[1]).toMatch(new RegExp(` ${held.cache_read} +\\${saved}$`))

    const steps = (await cliInProcess(['steps', 'words', 'main', '--home', p.home])).stdout.split('\n')
    expect(steps[0]).toContain(`cost  ${HOLD_SAVED}`)
    expect(steps[2]).toMatch(new RegExp(`^002 .* \\${saved} `))

    const why = (await cliInProcess(['why', 'words', 'main', '002', '--home', p.home])).stdout.trimEnd()
    expect(why.split('\n').at(-1)?.trim()).toBe(savedSentence(held.cache_read ?? 0, held.saved_usd))

    const status = await statusFor(p.server.ctx, 'sess-words')
    expect(statusText(status!)).toContain(`${HOLD_SAVED} ${saved}`)

    const data = await agentData(new Workspace(p.home, 'words'), 'main')
    expect(agentSummary(data).text).toContain(`${saved}</b><span>${HOLD_SAVED} (1 held step, `)
    expect(timelineRowsHtml(data, data.rows, 1000, serverLinks).text).toContain('>held notes_search<')

    const doc = await exportHtml(p.home, 'words')
    expect(doc).toContain(`${HOLD_SAVED} (1 held step, `)
    expect(doc).toContain(savedSentence(held.cache_read ?? 0, held.saved_usd))
  })
})
