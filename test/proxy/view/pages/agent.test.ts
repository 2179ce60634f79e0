/** view/pages/agent: a timeline row tags a compaction and says the hold's verdict; the bar scale is rounded up; a failed step is marked. */
import type { StepRow } from '../../../../proxy/report/steps'
import { timelineRow } from '../../../../proxy/report/timeline'
import {
  agentBody,
  agentSummary,
  barMax,
  timelineRowsHtml,
  verdict,
} from '../../../../proxy/view/pages/agent'
import { serverLinks } from '../../../../proxy/view/links'
import { stepRowOf } from '../../../support/agent-rows'

const base = stepRowOf()

describe('a timeline row', () => {
  it('tags a compaction, asked for or done', () => {
    const html = (c: StepRow['compaction']) =>
      timelineRowsHtml(
        { ws: 'w', agent: 'a' },
        [timelineRow(1, { ...base, compaction: c }, undefined)],
        1000,
        serverLinks,
      ).text
    expect(html('request')).toContain('<span class="tag">compaction</span>')
    expect(html('after')).toContain('<span class="tag">compacted</span>')
  })

  it('shows the hold’s verdict: held tools, or the reason', () => {
    expect(verdict({ held: ['a', 'b'], hold_reason: 'x' }).text).toContain('>held a, b<')
    expect(verdict({ held: ['a', 'b', 'c', 'd'], hold_reason: 'x' }).text).toContain('>held 4 tools<')
    // The reason in words; its code in the tooltip.
    expect(verdict({ held: [], hold_reason: 'system-changed' }).text).toBe(
      '<span class="muted" title="system-changed">system changed</span>',
    )
    expect(verdict({ held: [], hold_reason: 'first-step' }).text).toContain('>first step<')
    expect(verdict({ held: [], hold_reason: 'applied', reordered: true }).text).toContain('held (reordered)')
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

  it('counts a held reorder among the held steps', () => {
    const rows = [
      timelineRow(1, base, undefined),
      timelineRow(2, { ...base, step: '002', held: ['x'], hold_reason: 'applied' }, undefined),
      timelineRow(3, { ...base, step: '003', reordered: true, hold_reason: 'applied' }, undefined),
    ]
    expect(agentSummary({ ws: 'w', agent: 'a', rows, tools: [] }).text).toMatch(
      /hold saved \(2 held steps, [\d.,k]+ writes avoided\)/,
    )
  })
})
