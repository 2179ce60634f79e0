/**
 * OpenAI's prompt cache diagnostics (dialects/responses/diagnostics): `prompt_cache_diagnostics`
 * read as the provider wrote it (a hit, a miss with its reason and missed tokens, the other
 * verdicts by their type), and `prompt_cache_options.comparison_response_id` read, renamed and asked for.
 */
import { comparison, wordOf } from '../../../../proxy/dialects/responses/diagnostics'

describe("a response's prompt_cache_diagnostics", () => {
  it('reads a cache hit as no miss', () => {
    const d = { type: 'cache_hit' }
    expect(wordOf(d)).toEqual({ said: 'no_miss', reason: null, missedInputTokens: null, raw: d })
  })

  it('reads a miss by its reason, verbatim, with its missed tokens', () => {
    const d = {
      type: 'cache_miss',
      reason: 'tools_changed',
      cache_missed_tokens: 2048,
      comparison_reusable_tokens: 0,
    }
    expect(wordOf(d)).toEqual({ said: 'reason', reason: 'tools_changed', missedInputTokens: 2048, raw: d })
  })

  it('reads the other verdicts by their type', () => {
    const d = { type: 'comparison_response_not_found' }
    expect(wordOf(d)).toEqual({
      said: 'reason',
      reason: 'comparison_response_not_found',
      missedInputTokens: null,
      raw: d,
    })
  })

  it('reads an absent or typeless value as no word', () => {
    expect(wordOf(undefined)).toBeUndefined()
    expect(wordOf(null)).toBeUndefined()
    expect(wordOf({ reason: 'x' })).toBeUndefined()
  })
})

describe("a responses request's comparison id", () => {
  it('asks only with an id', () => {
    expect(comparison.of({ prompt_cache_options: { comparison_response_id: 'resp_1' } })).toEqual({
      asked: true,
      comparedWith: 'resp_1',
    })
    expect(comparison.of({ prompt_cache_options: {} })).toEqual({ asked: false, comparedWith: null })
    expect(comparison.asking({}, null)).toBeUndefined()
  })

  it('renames the baseline, keeping the other options, or drops the id when there is no answer', () => {
    const body = { prompt_cache_options: { comparison_response_id: 'resp_old', retention: '24h' } }
    expect(comparison.naming(body, 'resp_new')).toEqual({
      key: 'prompt_cache_options',
      value: { comparison_response_id: 'resp_new', retention: '24h' },
    })
    expect(comparison.naming(body, undefined)).toEqual({
      key: 'prompt_cache_options',
      value: { retention: '24h' },
    })
    expect(comparison.naming({}, 'resp_new')).toBeUndefined()
  })

  it('asks for a comparison with an answer, keeping the other options', () => {
    expect(comparison.asking({ prompt_cache_options: { retention: '24h' } }, 'resp_2')).toEqual({
      key: 'prompt_cache_options',
      value: { retention: '24h', comparison_response_id: 'resp_2' },
    })
  })
})
