/** view/pages/agent: a timeline row says compaction and the hold's verdict; the bar scale is rounded up; a failed step is marked. */
import type { StepMeta } from '../../../../generated/meta'
import type { StepRow } from '../../../../proxy/report/steps'
import { agentBody, barMax, timelineRow, timelineRowsHtml, verdict } from '../../../../proxy/view/pages/agent'
import { serverLinks } from '../../../../proxy/view/links'

const base: StepRow = {
  step: '001',
  time: '2026-01-01T00:00:00Z',
  model: 'm',
  status: 200,
  outcome: 'ok',
  held: [],
  hold_reason: 'first-step',
  input: 1,
  cache_read: 0,
  cache_write: 900,
  output: 10,
  cost_usd: 0.01,
  saved_usd: 0,
  ttfb_ms: 120,
  total_ms: 300,
  state: 'committed',
}
const meta = (cls?: string) =>
  ({ request_headers: cls ? { 'x-claude-code-request-class': cls } : {} }) as unknown as StepMeta

describe('a timeline row', () => {
  it('is a compaction when Claude Code said so', () => {
    expect(timelineRow(1, base, meta('compaction')).compaction).toBe(true)
    expect(timelineRow(1, base, meta('main')).compaction).toBe(false)
    expect(timelineRow(1, base, undefined).compaction).toBe(false)
  })

  it('shows the hold’s verdict: held tools, or the reason', () => {
    expect(verdict({ held: ['a', 'b'], hold_reason: 'x' }).text).toContain('held 2')
    expect(verdict({ held: [], hold_reason: 'system-changed' }).text).toContain('system-changed')
  })

  it('marks a provider error and an unpriced step', () => {
    const rows = [timelineRow(1, { ...base, status: 529, cost_usd: null }, undefined)]
    const html = timelineRowsHtml({ ws: 'w', agent: 'a' }, rows, 1000, serverLinks).text
    expect(html).toContain('<span class="bad">529</span>')
    expect(html).toContain('unpriced')
    expect(html).toContain('href="/ui/w/w/a/a/s/001"')
  })
})

describe('the agent page', () => {
  it('scales bars to the largest step rounded up, and lists loaded tools', () => {
    expect(barMax([timelineRow(1, base, undefined)])).toBe(1000)
    const html = agentBody(
      {
        ws: 'w',
        agent: 'a',
        rows: [timelineRow(1, base, undefined)],
        tools: [{ presented: 'fs_read', client: 'fs', description: 'Read a file' }],
      },
      serverLinks,
    ).text
    expect(html).toContain('fs_read')
    expect(html).toContain('id="agent-steps"')
  })
})
