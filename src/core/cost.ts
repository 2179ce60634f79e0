/**
 * Cost estimates from usage and a price table (USD per million tokens), matched by the longest
 * model-id prefix. Invariant: an unknown model has no cost (null), never a guessed one; the
 * built-in table is documented in docs/records.md and `prices:` in holdfast.yaml overrides it.
 */
import type { Cost, Usage } from '../generated/meta'
import type { Price } from '../generated/holdfast'

/** Public list prices as of 2026-12; cache_write is the 5-minute write, cache_read the cached input. */
export const BUILTIN_PRICES: Readonly<Record<string, Price>> = {
  'claude-opus-4-5': { input: 5, output: 25, cache_write: 6.25, cache_write_1h: 10, cache_read: 0.5 },
  'claude-opus-4': { input: 15, output: 75, cache_write: 18.75, cache_write_1h: 30, cache_read: 1.5 },
  'claude-sonnet-4': { input: 3, output: 15, cache_write: 3.75, cache_write_1h: 6, cache_read: 0.3 },
  'claude-3-7-sonnet': { input: 3, output: 15, cache_write: 3.75, cache_write_1h: 6, cache_read: 0.3 },
  'claude-haiku-4-5': { input: 1, output: 5, cache_write: 1.25, cache_write_1h: 2, cache_read: 0.1 },
  'claude-3-5-haiku': { input: 0.8, output: 4, cache_write: 1, cache_write_1h: 1.6, cache_read: 0.08 },
  'gpt-5-mini': { input: 0.25, output: 2, cache_read: 0.025 },
  'gpt-5-nano': { input: 0.05, output: 0.4, cache_read: 0.005 },
  'gpt-5': { input: 1.25, output: 10, cache_read: 0.125 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6, cache_read: 0.1 },
  'gpt-4.1-nano': { input: 0.1, output: 0.4, cache_read: 0.025 },
  'gpt-4.1': { input: 2, output: 8, cache_read: 0.5 },
  'gpt-4o-mini': { input: 0.15, output: 0.6, cache_read: 0.075 },
  'gpt-4o': { input: 2.5, output: 10, cache_read: 1.25 },
}

/** The table entry for `model`: the longest key that is a prefix of it; overrides first. */
export function priceFor(
  model: string | null | undefined,
  overrides: Readonly<Record<string, Price>> = {},
): { key: string; price: Price } | undefined {
  if (!model) return undefined
  for (const table of [overrides, BUILTIN_PRICES]) {
    let best: string | undefined
    for (const key of Object.keys(table)) {
      if (model.startsWith(key) && (best === undefined || key.length > best.length)) best = key
    }
    if (best !== undefined) return { key: best, price: table[best] as Price }
  }
  return undefined
}

const round = (usd: number): number => Math.round(usd * 1e6) / 1e6

/**
 * The step's cost, and what the hold saved when it applied: the tokens read from cache would
 * otherwise have been written (anthropic) or billed as fresh input (openai).
 */
export function estimateCost(
  model: string | null | undefined,
  usage: Usage | null,
  holdApplied: boolean,
  overrides?: Readonly<Record<string, Price>>,
): Cost | null {
  const found = priceFor(model, overrides)
  if (!found || !usage) return null
  const p = found.price
  const write = p.cache_write ?? p.input
  const read = p.cache_read ?? p.input
  const usd =
    (usage.input_tokens * p.input +
      usage.output_tokens * p.output +
      usage.cache_write_tokens * write +
      usage.cache_read_tokens * read) /
    1e6
  const saved = holdApplied ? (usage.cache_read_tokens * (write - read)) / 1e6 : 0
  return { usd: round(usd), saved_by_hold_usd: round(saved), priced_as: found.key }
}
