/**
 * One cause per step (proxy/core/cache-cause): Claude Code's eight names and the proxy's own, the
 * provider's word as the cause and quoted verbatim, refined only by what holdfast did to the same
 * part; the clock for expiry, byte-identical prefixes with collapsed reads as likely the server's,
 * and a disagreement between the provider and holdfast's diff said as such.
 */
import type { StepMeta } from '../../../generated/meta'
import {
  causeLines,
  causeOf,
  CLIENT_CAUSES,
  providerCause,
  PROXY_CAUSES,
} from '../../../proxy/core/cache-cause'
import type { PrefixMoves } from '../../../proxy/core/why'
import { isAttemptChild } from '../../../proxy/core/attempt'
import { moves } from '../../support/why-moves'

const T0 = Date.parse('2026-12-07T10:00:00Z')
const at = (ms: number): string => new Date(T0 + ms).toISOString()
const meta = (over: Partial<StepMeta> = {}): StepMeta =>
  ({
    agent: 'main',
    started_at: at(0),
    ended_at: at(1000),
    route: { provider: 'anthropic', url: 'x', model: 'claude-a' },
    request_headers: {},
    cache_keying_headers: {},
    hold: { applied: false, reason: 'no-subtraction', held: [] },
    injected_tools: [],
    changes: [],
    usage: { input_tokens: 3, output_tokens: 1, cache_read_tokens: 900, cache_write_tokens: 100 },
    ...over,
  }) as StepMeta
/** A step whose reads collapsed (a miss) a given time after the previous one ended. */
const missAfter = (ms: number, over: Partial<StepMeta> = {}): StepMeta =>
  meta({
    started_at: at(1000 + ms),
    usage: { input_tokens: 3, output_tokens: 1, cache_read_tokens: 0, cache_write_tokens: 1000 },
    ...over,
  })
const said = (
  reason: string | null,
  missed: number | null = 800,
): NonNullable<StepMeta['provider_cache']> => ({
  asked: true,
  compared_with: 'msg_prev',
  said: reason === null ? 'no_miss' : 'reason',
  reason,
  missed_input_tokens: reason === null ? null : missed,
  raw: reason === null ? null : { cache_miss_reason: { type: reason, cache_missed_input_tokens: missed } },
})

describe('the cause of a step', () => {
  it('is first_step on an agent’s first step, fork on an attempt’s', () => {
    expect(causeOf({ meta: meta(), first: true }).cause).toBe('first_step')
    expect(isAttemptChild('main-20261207T100000Z-k3f9')).toBe(true)
    expect(isAttemptChild('main.sub-ab12')).toBe(false)
    expect(
      causeOf({ meta: meta({ agent: 'main-20261207T100000Z-k3f9' }), first: true, fork: true }).cause,
    ).toBe('fork')
  })

  it('is no_miss when the step read what the previous one left cached', () => {
    const r = causeOf({ meta: meta(), previous: { meta: meta(), moves: moves() } })
    expect(r).toMatchObject({ cause: 'no_miss', missed: false })
  })

  it('is the provider’s word, quoted verbatim with the tokens it missed', () => {
    const r = causeOf({
      meta: missAfter(1000, { provider_cache: said('system_changed', 812) }),
      previous: { meta: meta(), moves: moves({ system: true }) },
    })
    expect(r).toMatchObject({ cause: 'system_prompt_changed', disagree: false })
    expect(causeLines(r)).toEqual([
      'cause: system_prompt_changed: the system prompt changed',
      'the provider said: system_changed, 812 input tokens missed',
    ])
    expect(providerCause('tools_changed')).toBe('tools_changed')
    expect(providerCause('messages_changed')).toBe('messages_rewritten')
    expect(providerCause('model_changed')).toBe('model_changed')
    expect(providerCause('previous_message_not_found')).toBeUndefined()
    expect(providerCause('unavailable')).toBeUndefined()
  })

  it('says when the provider and holdfast’s diff disagree, and keeps the provider’s word as the cause', () => {
    const r = causeOf({
      meta: missAfter(1000, { provider_cache: said('messages_changed') }),
      previous: { meta: meta(), moves: moves() },
    })
    expect(r).toMatchObject({ cause: 'messages_rewritten', own: 'likely_server_side', disagree: true })
    expect(causeLines(r).at(-1)).toMatch(
      /^holdfast's diff of the two requests says likely_server_side instead/,
    )
  })

  it('is held on a held step, and says whether the provider confirmed the held prefix', () => {
    const hold = { applied: true, reason: 'applied', held: ['notes_search'] }
    const confirmed = causeOf({
      meta: meta({ hold, provider_cache: said(null) }),
      previous: { meta: meta(), moves: moves({ tools: true }) },
    })
    expect(confirmed.cause).toBe('held')
    expect(causeLines(confirmed)).toContain('the provider confirmed the held prefix')
    const not = causeOf({
      meta: missAfter(1000, { hold, provider_cache: said('tools_changed') }),
      previous: { meta: meta(), moves: moves() },
    })
    expect(causeLines(not)).toContain('the provider did not confirm the held prefix')
  })

  it('takes a null previous_message_id for no comparison, never for the provider finding no divergence', () => {
    const hold = { applied: true, reason: 'applied', held: ['notes_search'] }
    const pc = { ...said(null), compared_with: null }
    const r = causeOf({
      meta: missAfter(1000, { hold, provider_cache: pc }),
      previous: { meta: meta(), moves: moves({ tools: true }) },
    })
    expect(r.provider).toMatchObject({ said: 'not_compared', compared_with: null })
    expect(causeLines(r)).toEqual([
      'cause: held: the hold re-sent the previous tools array',
      'the request named no earlier answer (previous_message_id null): the provider compared nothing',
      'the provider was not asked about the held prefix (no comparison with the previous step)',
    ])
  })

  it('quotes, and does not take as the cause, a verdict against another answer than the previous step’s', () => {
    const r = causeOf({
      meta: missAfter(1000, { provider_cache: { ...said('tools_changed', 90), compared_with: 'msg_older' } }),
      previous: { meta: meta({ answer_id: 'msg_prev' }), moves: moves({ system: true }) },
    })
    expect(r).toMatchObject({
      cause: 'system_prompt_changed',
      provider: { said: 'other', other_said: 'reason' },
    })
    expect(causeLines(r)).toContain(
      "the provider compared with msg_older, not the previous step's answer msg_prev, and said: tools_changed, 90 input tokens missed (quoted, not the cause)",
    )
  })

  it('is injected when only holdfast’s loaded tools moved, refining the provider’s tools_changed', () => {
    const toolChanges = { added: ['notes_search'], removed: [], edited: [], reordered: false }
    const r = causeOf({
      meta: missAfter(1000, { injected_tools: ['notes_search'], provider_cache: said('tools_changed') }),
      previous: { meta: meta(), moves: moves({ tools: true, toolChanges }) },
    })
    expect(r).toMatchObject({ cause: 'injected', disagree: false })
    const client = causeOf({
      meta: missAfter(1000),
      previous: {
        meta: meta(),
        moves: moves({ tools: true, toolChanges: { ...toolChanges, added: ['Grep'] } }),
      },
    })
    expect(client.cause).toBe('tools_changed')
  })

  it('is proxy_rewrite when holdfast itself changed the model it moved', () => {
    const r = causeOf({
      meta: missAfter(1000, { changes: [{ field: 'model', why: 'role reviewer routes to claude-b' }] }),
      previous: { meta: meta(), moves: moves({ model: true }) },
    })
    expect(r.cause).toBe('proxy_rewrite')
  })

  it('counts a step served by another model as model_changed for the next', () => {
    const r = causeOf({
      meta: missAfter(1000),
      previous: { meta: meta({ served_model: 'claude-fallback' }), moves: moves() },
    })
    expect(r.cause).toBe('model_changed')
  })

  it('names expiry from the gap and the writes’ lifetime: 6 minutes is ttl_expired_5m, 2 hours of 1 h writes ttl_expired_1h', () => {
    const prev = meta()
    expect(causeOf({ meta: missAfter(6 * 60_000), previous: { meta: prev, moves: moves() } }).cause).toBe(
      'ttl_expired_5m',
    )
    const long = meta({
      usage: {
        input_tokens: 3,
        output_tokens: 1,
        cache_read_tokens: 0,
        cache_write_tokens: 1000,
        cache_write_1h_tokens: 1000,
      },
    })
    expect(causeOf({ meta: missAfter(6 * 60_000), previous: { meta: long, moves: moves() } }).cause).toBe(
      'likely_server_side',
    )
    expect(causeOf({ meta: missAfter(2 * 3_600_000), previous: { meta: long, moves: moves() } }).cause).toBe(
      'ttl_expired_1h',
    )
  })

  it('is likely_server_side when the prefix was byte-identical within its lifetime and the reads still collapsed', () => {
    const r = causeOf({ meta: missAfter(30_000), previous: { meta: meta(), moves: moves() } })
    expect(r.cause).toBe('likely_server_side')
    expect(causeLines(r)[0]).toMatch(/byte-identical, yet the reads collapsed/)
  })

  it('only ever answers a cause from the closed sets', () => {
    expect([...CLIENT_CAUSES]).toEqual([
      'system_prompt_changed',
      'tools_changed',
      'model_changed',
      'messages_rewritten',
      'ttl_expired_5m',
      'ttl_expired_1h',
      'likely_server_side',
      'unknown',
    ])
    const closed = new Set<string>([...CLIENT_CAUSES, ...PROXY_CAUSES])
    const words = [
      null,
      'model_changed',
      'system_changed',
      'tools_changed',
      'messages_changed',
      'unavailable',
      'odd',
    ]
    const moved: Partial<PrefixMoves>[] = [
      {},
      { model: true },
      { system: true },
      { tools: true },
      { head: true },
      { keying: ['header:anthropic-beta'] },
    ]
    for (const reason of words)
      for (const m of moved)
        for (const gap of [1000, 6 * 60_000, 2 * 3_600_000])
          for (const current of [missAfter(gap), meta({ started_at: at(1000 + gap) })]) {
            const r = causeOf({
              meta: { ...current, provider_cache: said(reason) },
              previous: { meta: meta(), moves: moves(m) },
            })
            expect(closed.has(r.cause)).toBe(true)
            expect(closed.has(r.own)).toBe(true)
          }
  })
})
