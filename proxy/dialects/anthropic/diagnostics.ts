/**
 * Anthropic's cache diagnostics: a request carries `diagnostics: {previous_message_id: <msg_…> |
 * null}` (the object is the opt-in; null: nothing to compare yet), and the answer — its JSON body,
 * or `message_start`'s `message` when streaming — carries `diagnostics`: null when it found no
 * divergence, `{cache_miss_reason: null}` while its comparison is pending, else
 * `{cache_miss_reason: {type, cache_missed_input_tokens}}`. Pure. Invariant: the provider's
 * object is kept verbatim; only its `type` and token count are read.
 * https://platform.claude.com/docs/en/build-with-claude/cache-diagnostics
 */
import type { CacheComparison, CacheWord } from '../../core/dialect'
import { isObject, type Json, type JsonObject } from '../../core/json'

const FIELD = 'diagnostics'
const ID = 'previous_message_id'

/** What an answer's `diagnostics` says; undefined when it has none (an answer from before diagnostics, an error). */
export function wordOf(diagnostics: Json | undefined): CacheWord | undefined {
  if (diagnostics === undefined) return undefined
  if (diagnostics === null) return { said: 'no_miss', reason: null, missedInputTokens: null, raw: null }
  if (!isObject(diagnostics)) return undefined
  const r = diagnostics.cache_miss_reason
  if (r === null || r === undefined)
    return { said: 'pending', reason: null, missedInputTokens: null, raw: diagnostics }
  const reason = isObject(r) && typeof r.type === 'string' ? r.type : null
  const missed = isObject(r) ? r.cache_missed_input_tokens : undefined
  return {
    said: 'reason',
    reason,
    missedInputTokens: typeof missed === 'number' && Number.isFinite(missed) ? Math.round(missed) : null,
    raw: diagnostics,
  }
}

export const comparison: CacheComparison = {
  of(body) {
    const d = body[FIELD]
    if (!isObject(d)) return { asked: false, comparedWith: null }
    return { asked: true, comparedWith: typeof d[ID] === 'string' ? d[ID] : null }
  },
  naming(body, id) {
    const d = body[FIELD]
    if (!isObject(d)) return undefined
    const value: JsonObject = { ...d }
    // No answer to continue from: the opt-in stays, the stale id goes.
    if (id === undefined) delete value[ID]
    else value[ID] = id
    return { key: FIELD, value }
  },
  asking(body, id) {
    const d = body[FIELD]
    return { key: FIELD, value: { ...(isObject(d) ? d : {}), [ID]: id } }
  },
}
