/**
 * report/steps: the rows of an agent's steps read their metas at one tip and say what each step's
 * meta says (a held reorder and a compaction included); the cache read share and an unpriced cost
 * mean one thing wherever they are shown.
 */
import { readStepMeta } from '../../../proxy/record/read'
import type { StepMeta } from '../../../generated/meta'
import {
  cacheReadShare,
  costUnknown,
  stepRecords,
  stepRow,
  stepRows,
  totals,
} from '../../../proxy/report/steps'
import { Workspace } from '../../../proxy/store/workspace'
import { startProxy, type Proxy } from '../../support/harness'
import { mainStep, sendStep } from '../../support/view-demo'

let p: Proxy
beforeAll(async () => {
  p = await startProxy()
  for (let i = 1; i <= 3; i++) await sendStep(p, 'w', 'main', mainStep(i, ['Read']))
  await p.settled()
})
afterAll(() => p.close())

describe('step rows', () => {
  it('read each step’s meta as readStepMeta does, in step order', async () => {
    const ws = new Workspace(p.home, 'w')
    const records = await stepRecords(ws, 'main')
    expect(records.map((r) => r.ref.n)).toEqual([1, 2, 3])
    for (const r of records) expect(r.meta).toEqual(await readStepMeta(ws, 'main', r.ref.n))
    const rows = await stepRows(p.home, 'w', 'main')
    expect(rows.map((r) => [r.step, r.state, r.status])).toEqual([
      ['001', 'committed', 200],
      ['002', 'committed', 200],
      ['003', 'committed', 200],
    ])
    expect(totals(rows).cache_read).toBe(rows.reduce((s, r) => s + (r.cache_read ?? 0), 0))
  })

  it('say a held reorder and a compaction as the meta marks them, and nothing of either when the hold did not apply', async () => {
    const ws = new Workspace(p.home, 'w')
    const [first] = await stepRecords(ws, 'main')
    const base = first?.meta as StepMeta
    const row = (m: Partial<StepMeta>) =>
      stepRow({ ref: { n: 4, committed: true, journal: false }, meta: { ...base, ...m } }, 'interrupted')
    const held = {
      applied: true,
      reason: 'applied',
      held: [],
      reordered: true,
    } as unknown as StepMeta['hold']
    expect(row({ hold: held })).toMatchObject({ held: [], reordered: true })
    const notApplied = { ...held, applied: false, reason: 'system-changed' } as StepMeta['hold']
    expect(row({ hold: notApplied }).reordered).toBe(false)
    const compaction = {
      kind: 'after',
      via: 'its first message continues a summary',
    } as StepMeta['compaction']
    expect(row({ compaction }).compaction).toBe('after')
    expect(row({}).compaction).toBeNull()
    expect(
      stepRow({ ref: { n: 5, committed: false, journal: true }, meta: undefined }, 'interrupted'),
    ).toMatchObject({
      reordered: false,
      compaction: null,
      state: 'pending',
    })
  })

  it('give the cache read share over all input tokens, and call a cost unknown only when there was usage', () => {
    expect(cacheReadShare({ input: 10, cache_read: 80, cache_write: 10 })).toBeCloseTo(0.8)
    expect(cacheReadShare({ input: null, cache_read: null, cache_write: null })).toBeNull()
    expect(cacheReadShare({ input: 0, cache_read: 0, cache_write: 0 })).toBeNull()
    expect(costUnknown({ cost_usd: null, input: 5 })).toBe(true)
    expect(costUnknown({ cost_usd: null, input: null })).toBe(false)
  })
})
