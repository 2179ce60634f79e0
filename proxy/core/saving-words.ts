/**
 * The one vocabulary for what the hold saved and why it did or did not apply, shared by the CLI's
 * reports (`agents`, `steps`, `why`), the status line, the web view and its export. Invariant: a
 * saving is named the same everywhere: the dollars are "hold saved", the tokens are "cache writes
 * the hold avoided" ("writes avoided" in a column); a hold reason reads in words, its code kept
 * for `--json` and a tooltip; counts take the right plural. Keep-warm pings are named apart from the
 * hold: their cost is "pings cost", what they saved "warm saved" (the next step's cache reads that
 * would have been writes: "cache writes the pings avoided").
 */
import type { HoldReason } from './hold'

/** The dollars the hold saved: a column's and a card's label. */
export const HOLD_SAVED = 'hold saved'
/** The tokens the hold kept from being written to the cache again: a column's label. */
export const WRITES_AVOIDED = 'writes avoided'
/** The same, in a sentence. */
export const WRITES_AVOIDED_LONG = 'cache writes the hold avoided'

/** Keep-warm: the pings sent (a column's label), what they cost, what they saved. */
export const PINGS = 'pings'
export const PINGS_COST = 'pings cost'
export const WARM_SAVED = 'warm saved'

/** Dollars as every report shows them: 4 decimals under a cent, else 2; `-` when unknown. */
export function fmtUsd(n: number | null | undefined): string {
  if (n === null || n === undefined) return '-'
  return `$${n.toFixed(n !== 0 && Math.abs(n) < 0.01 ? 4 : 2)}`
}

/** The noun for `n` of a thing: `step` for 1, `steps` otherwise; `many` when the plural is not `one` + s. */
export const noun = (n: number, one: string, many = `${one}s`): string => (n === 1 ? one : many)

/** `1 step`, `2 steps`, `1,024 steps`. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString('en-US')} ${noun(n, one, many)}`
}

/** What a held step saved, in one sentence: `hold saved $0.0123 (3,087 cache writes the hold avoided)`. */
export function savedSentence(avoidedTokens: number, usd: number | null | undefined): string {
  return `${HOLD_SAVED} ${fmtUsd(usd ?? 0)} (${avoidedTokens.toLocaleString('en-US')} ${WRITES_AVOIDED_LONG})`
}

/**
 * What an agent's keep-warm pings did, in one sentence: `keep-warm: 2 pings cost $0.0012, warm
 * saved $0.0300 (12,288 cache writes the pings avoided)`; a saving no table priced is `unknown`.
 */
export function warmSentence(
  pings: number,
  costUsd: number,
  savedTokens: number,
  savedUsd: number | null,
): string {
  const saved = savedUsd === null ? 'unknown' : fmtUsd(savedUsd)
  return `keep-warm: ${plural(pings, 'ping')} cost ${fmtUsd(costUsd)}, ${WARM_SAVED} ${saved} (${savedTokens.toLocaleString('en-US')} cache writes the pings avoided)`
}

/** The hold's reason codes in words a user reads (the code stays in `--json` and a tooltip). */
export const HOLD_REASON_WORDS: Readonly<Record<HoldReason | 'not-a-subsequence', string>> = {
  applied: 'held',
  'first-step': 'first step',
  'no-subtraction': 'same tools',
  'not-a-sub-multiset': 'a tool added or changed',
  'not-a-subsequence': 'a tool added or changed',
  'model-changed': 'model changed',
  'system-changed': 'system changed',
  'head-changed': 'prefix changed',
  'keying-changed': 'cache key changed',
  'ttl-expired': 'cache expired',
  'breakpoint-limit': 'too many cache breakpoints',
  'previous-refused': 'previous step refused',
  'record-fault': 'previous record unreadable',
  'tools-inherited': 'tools kept by the socket',
  'not-a-request': 'not a request',
}

/** A reason code in words; an unknown code (a newer record) as it is. */
export function reasonWords(reason: string | null | undefined): string {
  if (!reason) return '-'
  return (HOLD_REASON_WORDS as Record<string, string>)[reason] ?? reason
}

/** What the hold did on a step, short: `held Read, Grep`, `held 9 tools` past `max` names, `held (reordered)`. */
export function heldWords(held: readonly string[], reordered = false, max = 3): string {
  if (held.length === 0) return reordered ? 'held (reordered)' : '-'
  return held.length <= max ? `held ${held.join(', ')}` : `held ${plural(held.length, 'tool')}`
}
