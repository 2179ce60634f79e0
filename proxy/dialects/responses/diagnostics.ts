/**
 * OpenAI's prompt cache diagnostics (Responses API): a request names a baseline in
 * `prompt_cache_options.comparison_response_id`; the response (its JSON, or the final `response`
 * of a stream) carries `prompt_cache_diagnostics`, one of `{type: "cache_hit"}`, `{type:
 * "cache_miss", reason, cache_missed_tokens, comparison_reusable_tokens}`,
 * `{type: "comparison_response_not_found"}` or `{type: "unavailable"}`. Pure. Invariant: the
 * provider's object is kept verbatim; the other `prompt_cache_options` stay as the client sent them.
 * https://developers.openai.com/api/docs/guides/prompt-caching/diagnostics
 */
import type { CacheComparison, CacheWord } from '../../core/dialect'
import { isObject, type Json, type JsonObject } from '../../core/json'

const FIELD = 'prompt_cache_options'
const ID = 'comparison_response_id'

/** What a response's `prompt_cache_diagnostics` says; undefined when it has none. */
export function wordOf(d: Json | undefined): CacheWord | undefined {
  if (!isObject(d) || typeof d.type !== 'string') return undefined
  if (d.type === 'cache_hit') return { said: 'no_miss', reason: null, missedInputTokens: null, raw: d }
  const missed = d.cache_missed_tokens
  return {
    said: 'reason',
    reason: d.type === 'cache_miss' && typeof d.reason === 'string' ? d.reason : d.type,
    missedInputTokens: typeof missed === 'number' && Number.isFinite(missed) ? Math.round(missed) : null,
    raw: d,
  }
}

export const comparison: CacheComparison = {
  of(body) {
    const o = body[FIELD]
    const id = isObject(o) ? o[ID] : undefined
    return typeof id === 'string' ? { asked: true, comparedWith: id } : { asked: false, comparedWith: null }
  },
  naming(body, id) {
    const o = body[FIELD]
    if (!isObject(o) || typeof o[ID] !== 'string') return undefined
    const value: JsonObject = { ...o }
    if (id === undefined) delete value[ID]
    else value[ID] = id
    return { key: FIELD, value }
  },
  asking(body, id) {
    // Responses has no opt-in without a baseline: no id, nothing to ask.
    if (id === null) return undefined
    const o = body[FIELD]
    return { key: FIELD, value: { ...(isObject(o) ? o : {}), [ID]: id } }
  },
}
