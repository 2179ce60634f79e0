/**
 * report/pings: a ping is a step of `<agent>.aux` naming the step it kept warm; the pings after a
 * step are counted on it with their cost; what they saved is the next step's cache reads (up to
 * what the last ping held cached) priced write − read at the next step's model, and only when
 * the next step came after the pinged step's cache lifetime and within the last ping's. The
 * clock is the records' own timestamps (a fake clock: minutes pass between fixtures, not in the test).
 */
import type { StepMeta, Usage } from '../../../generated/meta'
import { keepWarmOf, keepWarmTotals, pingOf, type PriceBook } from '../../../proxy/report/pings'
import type { StepRecord } from '../../../proxy/report/steps'

const T0 = Date.parse('2026-12-01T10:00:00Z')
const MIN = 60_000
const at = (ms: number): string => new Date(T0 + ms).toISOString()
const PRICES = { m: { input: 3, output: 15, cache_write: 3.75, cache_read: 0.3, cache_write_1h: 6 } }
const book = (prices = PRICES): PriceBook => ({
  prices: () => prices,
  ttlMs: () => ({ ttl: 5 * MIN, long: 60 * MIN }),
})

function record(
  agent: string,
  n: number,
  startMs: number,
  usage: Partial<Usage>,
  over: Partial<StepMeta> = {},
): StepRecord {
  const u: Usage = {
    input_tokens: 0,
    output_tokens: 1,
    cache_read_tokens: 0,
    cache_write_tokens: 0,
    ...usage,
  }
  const meta = {
    agent,
    step: String(n).padStart(3, '0'),
    dialect: 'anthropic',
    started_at: at(startMs),
    ended_at: at(startMs + 1000),
    route: { provider: 'anthropic', url: 'u', model: 'm' },
    request_headers: {},
    usage: u,
    cost: { usd: 0.001, saved_by_hold_usd: 0, priced_as: 'm', price_source: 'holdfast.yaml' },
    ...over,
  } as StepMeta
  return { ref: { n, committed: true, journal: false }, meta }
}
const ping = (n: number, of: number, startMs: number, cached = 10_000): StepRecord =>
  record(
    'main.aux',
    n,
    startMs,
    { cache_read_tokens: cached },
    { request_headers: { 'x-holdfast-keep-warm': String(of).padStart(3, '0') } },
  )

test('a ping names the step it kept warm by its recorded header; any other step is none', () => {
  expect(pingOf(ping(1, 3, 0).meta)).toBe(3)
  expect(pingOf(record('main.aux', 1, 0, {}).meta)).toBeUndefined()
  expect(pingOf(undefined)).toBeUndefined()
})

test('pings that kept a prefix past its lifetime saved the next step’s reads at write − read', () => {
  const main = [
    record('main', 1, 0, { cache_write_tokens: 10_000 }),
    record('main', 2, 9 * MIN, { cache_read_tokens: 12_000, cache_write_tokens: 50 }),
  ]
  // Pings at 4.5 and 9 minutes; the user is back at 9 (over 5 minutes after step 001).
  const aux = [ping(1, 1, 4.5 * MIN), ping(2, 1, 8 * MIN)]
  const w = keepWarmOf(main, aux, book()).get(1)
  // Its reads, up to what the last ping held cached: 10,000 tokens at $3.75 − $0.30 per million.
  expect(w).toEqual({
    step: '001',
    pings: 2,
    cost_usd: 0.002,
    unpriced: 0,
    next: '002',
    saved_tokens: 10_000,
    saved_usd: 0.0345,
  })
  expect(keepWarmTotals([w!])).toEqual({
    pings: 2,
    cost_usd: 0.002,
    unpriced: 0,
    saved_tokens: 10_000,
    saved_usd: 0.0345,
    unpriced_savings: 0,
  })
})

test('pings saved nothing when the next step came within the pinged step’s own lifetime (they were not needed)', () => {
  const main = [
    record('main', 1, 0, { cache_write_tokens: 10_000 }),
    record('main', 2, 4.9 * MIN, { cache_read_tokens: 10_000 }),
  ]
  const w = keepWarmOf(main, [ping(1, 1, 4.5 * MIN)], book()).get(1)
  expect(w).toMatchObject({ pings: 1, cost_usd: 0.001, next: '002', saved_tokens: 0, saved_usd: 0 })
})

test('pings saved nothing when the last one’s lifetime had run out too (the prefix expired anyway)', () => {
  const main = [
    record('main', 1, 0, { cache_write_tokens: 10_000 }),
    record('main', 2, 30 * MIN, { cache_write_tokens: 10_000 }),
  ]
  const w = keepWarmOf(main, [ping(1, 1, 4.5 * MIN)], book()).get(1)
  expect(w).toMatchObject({ saved_tokens: 0, saved_usd: 0 })
})

test('a 1-hour prefix lives an hour: a ping under it saved nothing at 30 minutes, and a saving past it is priced at the 1-hour write', () => {
  const long = { cache_write_tokens: 10_000, cache_write_1h_tokens: 10_000 }
  const soon = [record('main', 1, 0, long), record('main', 2, 30 * MIN, { cache_read_tokens: 10_000 })]
  expect(keepWarmOf(soon, [ping(1, 1, 25 * MIN)], book()).get(1)).toMatchObject({ saved_tokens: 0 })
  const late = [record('main', 1, 0, long), record('main', 2, 70 * MIN, { cache_read_tokens: 10_000 })]
  // $6 − $0.30 per million.
  expect(keepWarmOf(late, [ping(1, 1, 55 * MIN)], book()).get(1)).toMatchObject({
    saved_tokens: 10_000,
    saved_usd: 0.057,
  })
})

test('pings with no step after them yet cost what they cost and saved nothing so far', () => {
  const w = keepWarmOf(
    [record('main', 1, 0, { cache_write_tokens: 10_000 })],
    [ping(1, 1, 4.5 * MIN)],
    book(),
  ).get(1)
  expect(w).toMatchObject({ next: null, pings: 1, cost_usd: 0.001, saved_tokens: 0, saved_usd: 0 })
})

test('a saving no table prices is unknown, never $0; other .aux steps are no pings', () => {
  const main = [
    record('main', 1, 0, { cache_write_tokens: 10_000 }),
    record('main', 2, 9 * MIN, { cache_read_tokens: 10_000 }),
  ]
  const side = record('main.aux', 1, 2 * MIN, { cache_write_tokens: 500 })
  const groups = keepWarmOf(main, [side, ping(2, 1, 8 * MIN)], book({} as typeof PRICES))
  expect([...groups.keys()]).toEqual([1])
  expect(groups.get(1)).toMatchObject({ pings: 1, saved_tokens: 10_000, saved_usd: null })
  expect(keepWarmTotals(groups.values())).toMatchObject({ saved_usd: 0, unpriced_savings: 1 })
  expect(keepWarmOf(main, [side], book()).size).toBe(0)
})
