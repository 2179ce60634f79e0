/** report/timeline: a row is a compaction when its record is marked so, or (older records) when Claude Code's request-class header said so. */
import type { StepMeta } from '../../../generated/meta'
import type { StepRow } from '../../../proxy/report/steps'
import { timelineRow } from '../../../proxy/report/timeline'

const base: StepRow = {
  step: '001',
  time: '2026-01-01T00:00:00Z',
  model: 'm',
  status: 200,
  outcome: 'ok',
  held: [],
  reordered: false,
  hold_reason: 'first-step',
  compaction: null,
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
  it('is a compaction when its record is marked so, or (older records) Claude Code said so', () => {
    expect(timelineRow(1, { ...base, compaction: 'after' }, meta('main')).compaction).toBe('after')
    expect(timelineRow(1, base, meta('compaction')).compaction).toBe('request')
    expect(timelineRow(1, base, meta('main')).compaction).toBeNull()
    expect(timelineRow(1, base, undefined).compaction).toBeNull()
    expect(timelineRow(7, base, undefined)).toMatchObject({ n: 7, step: '001' })
  })
})
