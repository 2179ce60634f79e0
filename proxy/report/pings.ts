/**
 * What keep-warm pings cost and saved (docs/hold.md, "Keep-warm"), for `holdfast steps` and
 * `holdfast agents`. A ping is a step of `<agent>.aux` whose recorded headers carry
 * `x-holdfast-keep-warm: <NNN>`, the step of `<agent>` it kept warm. The pings after a step are
 * credited to it: their cost, and what the agent's next step read instead of writing — only when
 * that step came after the cache lifetime of the pinged one (without the pings its prefix would
 * have expired) and within the lifetime of the last ping before it (the pings kept it); the tokens
 * are its cache reads up to what that ping held cached, priced write − read at the next step's
 * model from the table that priced it. Pure but for the prices, read from holdfast.yaml (never
 * written) only when a saving priced by it is to be priced.
 */
import fs from 'node:fs'
import type { StepMeta } from '../../generated/meta'
import type { Price } from '../../generated/holdfast'
import { readInsteadOfWriteUsd } from '../core/cost'
import { KEEP_WARM_HEADER } from '../core/headers'
import { CACHE_TTL_MS, LONG_CACHE_TTL_MS } from '../core/hold'
import { formatStep, parseStep } from '../core/naming'
import { dialectByName } from '../dialects'
import { homePaths } from '../store/home'
import { parseConfig } from '../store/config'

/** A step as report/steps reads it (its number and meta). */
interface StepRecord {
  ref: { n: number }
  meta: StepMeta | undefined
}

/** The pings after one step of an agent, and what they saved. */
export interface KeepWarm {
  /** The step they kept warm. */
  step: string
  pings: number
  /** Summed over priced pings; `unpriced` counts the others. */
  cost_usd: number
  unpriced: number
  /** The agent's next step, null while there is none. */
  next: string | null
  /** The next step's cache reads the pings kept from being writes (0: none, or not needed). */
  saved_tokens: number
  /** Those tokens at write − read price; null when no table prices the next step's model. */
  saved_usd: number | null
}

/** The step of the parent agent a ping kept warm, from its recorded headers; undefined for any other step. */
export function pingOf(meta: StepMeta | undefined): number | undefined {
  const v = meta?.request_headers?.[KEEP_WARM_HEADER]
  return v === undefined ? undefined : parseStep(v)
}

/** The prices a saving is priced with: holdfast.yaml's, read once per report, never written. */
export interface PriceBook {
  prices: () => Readonly<Record<string, Price>>
  ttlMs: () => { ttl: number; long: number }
}

/** The home's prices and cache lifetimes; an absent or unreadable holdfast.yaml has none (the defaults). */
export function priceBook(home: string): PriceBook {
  let config: ReturnType<typeof parseConfig> | null | undefined
  const read = (): ReturnType<typeof parseConfig> | null => {
    if (config !== undefined) return config
    try {
      const file = homePaths.config(home)
      config = parseConfig(fs.readFileSync(file, 'utf8'), file)
    } catch {
      config = null
    }
    return config
  }
  return {
    prices: () => read()?.prices ?? {},
    ttlMs: () => ({
      ttl: read()?.hold?.ttl_ms ?? CACHE_TTL_MS,
      long: read()?.hold?.long_ttl_ms ?? LONG_CACHE_TTL_MS,
    }),
  }
}

const endOf = (m: StepMeta): number => Date.parse(m.ended_at ?? m.started_at)
const cachedBy = (m: StepMeta): number =>
  m.usage ? m.usage.cache_read_tokens + m.usage.cache_write_tokens : 0

/**
 * The pings of `aux` (the records of `<agent>.aux`) by the step of `agent` they kept warm, with
 * what each group cost and what the agent's next step saved by them. Empty when there are none
 * (nothing of holdfast.yaml is read then).
 */
export function keepWarmOf(
  records: readonly StepRecord[],
  aux: readonly StepRecord[],
  book: PriceBook,
): Map<number, KeepWarm> {
  const groups = new Map<number, StepMeta[]>()
  for (const { meta } of aux) {
    const k = pingOf(meta)
    if (k === undefined || !meta) continue
    groups.set(k, [...(groups.get(k) ?? []), meta])
  }
  const out = new Map<number, KeepWarm>()
  if (groups.size === 0) return out
  const byN = new Map(records.map((r) => [r.ref.n, r.meta]))
  for (const [k, pings] of groups) {
    const next = records.find((r) => r.ref.n > k && r.meta)
    const w: KeepWarm = {
      step: formatStep(k),
      pings: pings.length,
      cost_usd: 0,
      unpriced: 0,
      next: next ? formatStep(next.ref.n) : null,
      saved_tokens: 0,
      saved_usd: 0,
    }
    for (const p of pings) {
      if (p.cost) w.cost_usd += p.cost.usd
      else if (p.usage) w.unpriced++
    }
    w.cost_usd = Math.round(w.cost_usd * 1e6) / 1e6
    const pinged = byN.get(k)
    const n = next?.meta
    if (pinged && n?.usage) saving(w, pinged, pings, n, book)
    out.set(k, w)
  }
  return out
}

/** The next step's saving by the pings (see the header), into `w`. */
function saving(w: KeepWarm, pinged: StepMeta, pings: StepMeta[], next: StepMeta, book: PriceBook): void {
  const long = (pinged.usage?.cache_write_1h_tokens ?? 0) > 0
  const { ttl, long: longTtl } = book.ttlMs()
  const life = long ? longTtl : ttl
  const at = Date.parse(next.started_at)
  // Back within the pinged step's lifetime: its prefix was still cached, the pings were not needed.
  if (!(at - endOf(pinged) > life)) return
  const last = pings.filter((p) => Date.parse(p.started_at) < at && cachedBy(p) > 0).at(-1)
  // No ping had cached it, or the last one's lifetime ran out too: the pings did not keep it.
  if (!last || at - endOf(last) > life) return
  w.saved_tokens = Math.min(next.usage?.cache_read_tokens ?? 0, cachedBy(last))
  const source = next.cost?.price_source
  w.saved_usd = readInsteadOfWriteUsd(
    next.route.model,
    w.saved_tokens,
    long,
    source,
    source === 'holdfast.yaml' ? book.prices() : {},
    dialectByName(next.dialect).rows.priceProvider,
  )
}

/** An agent's pings summed: what `holdfast agents` shows on its row. */
export interface KeepWarmTotals {
  pings: number
  cost_usd: number
  unpriced: number
  saved_tokens: number
  /** Summed over priced savings; `unpriced_savings` counts the others. */
  saved_usd: number
  unpriced_savings: number
}

export function keepWarmTotals(groups: Iterable<KeepWarm>): KeepWarmTotals | undefined {
  let t: KeepWarmTotals | undefined
  for (const g of groups) {
    t ??= { pings: 0, cost_usd: 0, unpriced: 0, saved_tokens: 0, saved_usd: 0, unpriced_savings: 0 }
    t.pings += g.pings
    t.cost_usd += g.cost_usd
    t.unpriced += g.unpriced
    t.saved_tokens += g.saved_tokens
    if (g.saved_usd === null) t.unpriced_savings++
    else t.saved_usd += g.saved_usd
  }
  if (t) {
    t.cost_usd = Math.round(t.cost_usd * 1e6) / 1e6
    t.saved_usd = Math.round(t.saved_usd * 1e6) / 1e6
  }
  return t
}
