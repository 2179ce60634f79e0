/** report/timeline: a row is a compaction when its record is marked so, or (older records) when Claude Code's request-class header said so; its cause is the one holdfast why gives. */
import type { StepMeta } from '../../../generated/meta'
import { timelineRow, timelineRows } from '../../../proxy/report/timeline'
import { why } from '../../../proxy/report/why'
import { Workspace } from '../../../proxy/store/workspace'
import { startFakeUpstream } from '../../support/fake-upstream'
import { startProxy } from '../../support/harness'
import { KEY_ENV, keyedRows, recordDemo } from '../../support/view-demo'
import { stepRowOf } from '../../support/agent-rows'

const base = stepRowOf()

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

describe('a timeline row’s cause', () => {
  it('is the cause holdfast why gives the step, on every row of a recorded agent', async () => {
    process.env[KEY_ENV] = 'sk-view'
    const fake = await startFakeUpstream()
    const p = await startProxy({ fake, config: { providers: keyedRows(fake.anthropicBaseUrl) } })
    try {
      await recordDemo(p, 'demo')
      const rows = await timelineRows(new Workspace(p.home, 'demo'), 'main')
      expect(rows.map((r) => r.cause)).toContain('held') // 003 drops a tool
      expect(rows.map((r) => r.cause)).toContain('system_prompt_changed') // 005 edits the system
      for (const r of rows)
        expect([r.step, r.cause]).toEqual([r.step, (await why(p.home, 'demo', 'main', r.step)).cause])
    } finally {
      await p.close()
      await fake.close()
    }
  })
})
