/**
 * Anthropic's cache diagnostics (dialects/anthropic/diagnostics): the answer's `diagnostics` read as
 * the provider wrote it (null: no divergence; a null reason: pending; else its `type` and missed
 * tokens, verbatim), and the request's `diagnostics.previous_message_id` read, renamed and asked for.
 */
import { comparison, wordOf } from '../../../../proxy/dialects/anthropic/diagnostics'

describe("an anthropic answer's diagnostics", () => {
  it('reads a named reason verbatim with its missed tokens, and keeps the object whole', () => {
    const d = { cache_miss_reason: { type: 'system_changed', cache_missed_input_tokens: 4100 } }
    expect(wordOf(d)).toEqual({ said: 'reason', reason: 'system_changed', missedInputTokens: 4100, raw: d })
  })

  it('reads a reason it does not know as the provider spelled it', () => {
    const d = { cache_miss_reason: { type: 'brand_new_reason' } }
    expect(wordOf(d)).toEqual({ said: 'reason', reason: 'brand_new_reason', missedInputTokens: null, raw: d })
  })

  it('reads null as a comparison that found no divergence', () => {
    expect(wordOf(null)).toEqual({ said: 'no_miss', reason: null, missedInputTokens: null, raw: null })
  })

  it('reads a null reason as a comparison still pending', () => {
    const d = { cache_miss_reason: null }
    expect(wordOf(d)).toEqual({ said: 'pending', reason: null, missedInputTokens: null, raw: d })
  })

  it('reads an absent or malformed diagnostics as no word at all', () => {
    expect(wordOf(undefined)).toBeUndefined()
    expect(wordOf('odd')).toBeUndefined()
  })
})

describe("an anthropic request's diagnostics id", () => {
  it('says whether a request asks and which answer it names (null: it opts in with none)', () => {
    expect(comparison.of({ diagnostics: { previous_message_id: 'msg_1' } })).toEqual({
      asked: true,
      comparedWith: 'msg_1',
    })
    expect(comparison.of({ diagnostics: { previous_message_id: null } })).toEqual({
      asked: true,
      comparedWith: null,
    })
    expect(comparison.of({ model: 'm' })).toEqual({ asked: false, comparedWith: null })
  })

  it('renames the answer a request names, keeping its other fields; drops only the id when there is none', () => {
    const body = { diagnostics: { previous_message_id: 'msg_old', extra: 1 } }
    expect(comparison.naming(body, 'msg_new')).toEqual({
      key: 'diagnostics',
      value: { previous_message_id: 'msg_new', extra: 1 },
    })
    expect(comparison.naming(body, undefined)).toEqual({ key: 'diagnostics', value: { extra: 1 } })
    expect(body.diagnostics.previous_message_id).toBe('msg_old')
  })

  it('renames nothing in a request that does not ask', () => {
    expect(comparison.naming({ model: 'm' }, 'msg_new')).toBeUndefined()
  })

  it('asks with an id, or with null when there is no answer yet', () => {
    expect(comparison.asking({}, 'msg_9')).toEqual({
      key: 'diagnostics',
      value: { previous_message_id: 'msg_9' },
    })
    expect(comparison.asking({}, null)).toEqual({ key: 'diagnostics', value: { previous_message_id: null } })
  })
})
