/**
 * Cost estimates from usage: `prices:` in holdfast.yaml first (USD per million tokens, matched by
 * the longest model-id prefix), else the maintained price library `@pydantic/genai-prices`
 * (pinned, bundled data: no network), which knows tiers and dated model ids. Invariant: a model
 * neither knows has no cost (null: shown as unknown, never $0), and every cost says what it was
 * priced as and from which table.
 */
import type { Cost, Usage } from '../../generated/meta'
import type { Price } from '../../generated/holdfast'

/** The library, loaded on the first cost (the commit worker prices; other threads never load it). */
type Library = typeof import('@pydantic/genai-prices')
let library: Library | undefined
const lib = (): Library =>
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  (library ??= require('@pydantic/genai-prices') as Library)

/** The library's version, recorded with each cost it priced. */
export const LIBRARY = 'genai-prices@0.1.8'

/** The holdfast.yaml entry for `model`: the longest key that is a prefix of it. */
export function priceFor(
  model: string | null | undefined,
  overrides: Readonly<Record<string, Price>> = {},
): { key: string; price: Price } | undefined {
  if (!model) return undefined
  let best: string | undefined
  for (const key of Object.keys(overrides)) {
    if (model.startsWith(key) && (best === undefined || key.length > best.length)) best = key
  }
  return best === undefined ? undefined : { key: best, price: overrides[best] as Price }
}

const round = (usd: number): number => Math.round(usd * 1e6) / 1e6

/**
 * USD of `usage` at a holdfast.yaml price (cache writes at input price when it names none; the
 * writes of the 1 hour lifetime at `cache_write_1h` when both it and the bucket are there).
 */
function byOverride(p: Price, u: Usage): number {
  const write = p.cache_write ?? p.input
  const read = p.cache_read ?? p.input
  const long =
    p.cache_write_1h === undefined ? 0 : Math.min(u.cache_write_1h_tokens ?? 0, u.cache_write_tokens)
  return (
    (u.input_tokens * p.input +
      u.output_tokens * p.output +
      (u.cache_write_tokens - long) * write +
      long * (p.cache_write_1h ?? write) +
      u.cache_read_tokens * read) /
    1e6
  )
}

/** USD of `usage` by the library, and the model it matched; undefined when it knows no price. */
function byLibrary(
  model: string,
  u: Usage,
  provider: string | undefined,
): { usd: number; matched: string } | undefined {
  const r = lib().calcPrice(
    {
      // The library's input_tokens is the whole prompt, cache reads and writes included.
      input_tokens: u.input_tokens + u.cache_read_tokens + u.cache_write_tokens,
      cache_read_tokens: u.cache_read_tokens,
      cache_write_tokens: u.cache_write_tokens,
      output_tokens: u.output_tokens,
    },
    model,
    provider ? { providerId: provider } : {},
  )
  return r ? { usd: r.total_price, matched: `${r.provider.id}/${r.model.id}` } : undefined
}

/**
 * The step's cost, and what the hold saved when it applied: the tokens read from cache would
 * otherwise have been written (anthropic) or billed as fresh input (openai). `provider` is the
 * price library's provider id (`anthropic`, `openai`), when the dialect says it. A usage with
 * iterations (a server-side fallback, a tool loop, a compaction) is priced from their sum, each at
 * the model that ran it; one unpriced iteration leaves the step unpriced.
 */
export function estimateCost(
  model: string | null | undefined,
  usage: Usage | null,
  holdApplied: boolean,
  overrides?: Readonly<Record<string, Price>>,
  provider?: string,
): Cost | null {
  const its = usage?.iterations
  if (!model || !usage || !its || its.length === 0)
    return costOf(model, usage, holdApplied, overrides, provider)
  let usd = 0
  const as = new Set<string>()
  const sources = new Set<string>()
  for (const it of its) {
    const c = costOf(it.model ?? model, iterationUsage(it), false, overrides, provider)
    if (!c) return null
    usd += c.usd
    as.add(c.priced_as)
    if (c.price_source) sources.add(c.price_source)
  }
  const saved = holdApplied ? (costOf(model, usage, true, overrides, provider)?.saved_by_hold_usd ?? 0) : 0
  return {
    usd: round(usd),
    saved_by_hold_usd: saved,
    priced_as: [...as].join(' + '),
    ...(sources.size > 0 ? { price_source: [...sources].join(' + ') } : {}),
  }
}

const iterationUsage = (it: NonNullable<Usage['iterations']>[number]): Usage => ({
  input_tokens: it.input_tokens,
  output_tokens: it.output_tokens,
  cache_read_tokens: it.cache_read_tokens,
  cache_write_tokens: it.cache_write_tokens,
})

function costOf(
  model: string | null | undefined,
  usage: Usage | null,
  holdApplied: boolean,
  overrides?: Readonly<Record<string, Price>>,
  provider?: string,
): Cost | null {
  if (!model || !usage) return null
  // Had the hold not applied, the cache reads would have been cache writes.
  const unheld: Usage = {
    ...usage,
    cache_read_tokens: 0,
    cache_write_tokens: usage.cache_write_tokens + usage.cache_read_tokens,
  }
  const own = priceFor(model, overrides)
  if (own) {
    const usd = byOverride(own.price, usage)
    const saved = holdApplied ? byOverride(own.price, unheld) - usd : 0
    return {
      usd: round(usd),
      saved_by_hold_usd: round(saved),
      priced_as: own.key,
      price_source: 'holdfast.yaml',
    }
  }
  const found = byLibrary(model, usage, provider)
  if (!found) return null
  // With nothing read from cache the unheld usage is the usage itself: nothing saved, and the
  // library is not asked twice (what a call costs: docs/performance.md).
  const saved =
    holdApplied && usage.cache_read_tokens > 0
      ? (byLibrary(model, unheld, provider)?.usd ?? found.usd) - found.usd
      : 0
  return {
    usd: round(found.usd),
    saved_by_hold_usd: round(Math.max(0, saved)),
    priced_as: found.matched,
    price_source: LIBRARY,
  }
}

/**
 * What `tokens` read from the cache saved against writing them again, at `model`'s price from the
 * table that priced the step (`source`: its cost's price_source; holdfast.yaml, else the library):
 * the write price (the 1 hour one when `long`) less the read price. Null when that table knows no
 * price for the model (never $0).
 */
export function readInsteadOfWriteUsd(
  model: string | null | undefined,
  tokens: number,
  long: boolean,
  source: string | undefined,
  overrides: Readonly<Record<string, Price>> = {},
  provider?: string,
): number | null {
  if (!model) return null
  if (tokens === 0) return 0
  const none: Usage = { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0 }
  const written: Usage = {
    ...none,
    cache_write_tokens: tokens,
    ...(long ? { cache_write_1h_tokens: tokens } : {}),
  }
  const read: Usage = { ...none, cache_read_tokens: tokens }
  if (source === 'holdfast.yaml') {
    const own = priceFor(model, overrides)
    return own ? round(byOverride(own.price, written) - byOverride(own.price, read)) : null
  }
  const w = byLibrary(model, written, provider)
  const r = byLibrary(model, read, provider)
  return w && r ? round(Math.max(0, w.usd - r.usd)) : null
}
