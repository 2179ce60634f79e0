/** view/pages/cohort: members side by side; one still waiting says so, an answered one shows its answer, escaped. */
import type { CohortRow } from '../../../../proxy/report/cohort'
import { cohortBody, cohortMembers } from '../../../../proxy/view/pages/cohort'
import { serverLinks } from '../../../../proxy/view/links'

const member = (over: Partial<CohortRow>): CohortRow => ({
  child: 'main-20260101T000000Z-ab12',
  role: 'reviewer',
  model: 'claude-haiku-4-5',
  stop_reason: 'end_turn',
  status: 200,
  outcome: 'ok',
  usage: { input_tokens: 1, output_tokens: 2, cache_read_tokens: 3, cache_write_tokens: 4 },
  cost_usd: 0.01,
  total_ms: 50,
  answer: 'Looks <fine>.',
  ...over,
})

describe('the cohort page', () => {
  it('shows an answered member’s answer and a waiting one as waiting', () => {
    const d = {
      ws: 'w',
      agent: 'main',
      n: 2,
      report: {
        notch: 'f'.repeat(40),
        members: [member({}), member({ role: 'writer', outcome: null, answer: null, usage: null })],
      },
    }
    const html = cohortMembers(d, serverLinks).text
    expect(html).toContain('Looks &lt;fine&gt;.')
    expect(html).toContain('waiting for the answer')
    expect(cohortBody(d, serverLinks).text).toContain('holdfast cohort w main@002')
  })

  it('says when no attempt hangs on the step', () => {
    expect(
      cohortMembers({ ws: 'w', agent: 'main', n: 1, report: { notch: 'x', members: [] } }, serverLinks).text,
    ).toContain('No attempt')
  })
})
