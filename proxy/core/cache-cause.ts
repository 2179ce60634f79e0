/**
 * One cause per step for what its prompt cache did, in the words Claude Code's status line uses
 * (`system_prompt_changed`, `tools_changed`, `model_changed`, `messages_rewritten`,
 * `ttl_expired_5m`, `ttl_expired_1h`, `likely_server_side`, `unknown`) and the ones only a proxy
 * can know (`held`, `injected`, `proxy_rewrite`, `fork`), with `first_step` and `no_miss`. Pure:
 * it reads two steps' meta.json (the provider's verdict, usage, the hold, what holdfast changed)
 * and holdfast's own diff of their requests. Invariant: the provider's word, when it gave one, is
 * the cause (refined only by what holdfast itself did to the same part) and is quoted verbatim;
 * when holdfast's diff disagrees the report says so; identical bytes with collapsed reads are
 * `likely_server_side`, never guessed as something else.
 */
import type { StepMeta } from '../../generated/meta'
import type { PrefixMoves } from './why'

export const CLIENT_CAUSES = [
  'system_prompt_changed',
  'tools_changed',
  'model_changed',
  'messages_rewritten',
  'ttl_expired_5m',
  'ttl_expired_1h',
  'likely_server_side',
  'unknown',
] as const
export const PROXY_CAUSES = ['held', 'injected', 'proxy_rewrite', 'fork', 'first_step', 'no_miss'] as const
export type Cause = (typeof CLIENT_CAUSES)[number] | (typeof PROXY_CAUSES)[number]

/** A read under this share of what the previous step left cached is a miss. */
export const MISS_SHARE = 0.9
const MIN = 60_000

export interface CauseInput {
  meta: StepMeta
  /** The step before, with holdfast's diff of the two requests; undefined when there is none to read. */
  previous?: { meta: StepMeta; moves: PrefixMoves }
  /** The step is an attempt's first (forked from a notch). */
  fork?: boolean
  /** It is the agent's first step. */
  first?: boolean
}

export interface ProviderSaid {
  /** The provider's word verbatim (anthropic cache_miss_reason.type, responses its reason). */
  reason: string | null
  missed_input_tokens: number | null
  /**
   * `not_compared`: the request named no earlier answer (anthropic `previous_message_id: null`), so
   * the provider's null is no comparison; `other`: it compared with another answer than the
   * previous step's (its word is quoted, not taken as the cause).
   */
  said: 'reason' | 'no_miss' | 'pending' | 'nothing' | 'not_compared' | 'other'
  /** The answer id the request named; with `other`, the previous step's is `previous_answer`. */
  compared_with: string | null
  previous_answer?: string
  /** What the provider said when it compared with another answer (`other`). */
  other_said?: 'reason' | 'no_miss' | 'pending' | 'nothing'
}

export interface CauseReport {
  cause: Cause
  /** What the provider said, when the request asked it; null when it was not asked. */
  provider: ProviderSaid | null
  /** holdfast's own reading of the two requests (what its diff alone would say). */
  own: Cause
  /** The provider's word and holdfast's diff point at different causes. */
  disagree: boolean
  /** Whether the step missed the cache the previous step left (null: no usage to tell). */
  missed: boolean | null
}

/** The provider's word as one of the causes; undefined when it names none (not found, unavailable). */
export function providerCause(reason: string | null | undefined): Cause | undefined {
  if (!reason) return undefined
  const r = reason.toLowerCase()
  // Anthropic's own words first; a reason that names no part (not found, unavailable) is none.
  const exact: Record<string, Cause | undefined> = {
    model_changed: 'model_changed',
    system_changed: 'system_prompt_changed',
    tools_changed: 'tools_changed',
    messages_changed: 'messages_rewritten',
  }
  if (r in exact) return exact[r]
  if (/not_found|unavailable|unknown|expired/.test(r)) return undefined
  // Responses' reasons, by the part they name.
  if (r.includes('model')) return 'model_changed'
  if (r.includes('system') || r.includes('instructions')) return 'system_prompt_changed'
  if (r.includes('tool')) return 'tools_changed'
  if (r.includes('message') || r.includes('input')) return 'messages_rewritten'
  return undefined
}

const cachedBy = (m: StepMeta): number =>
  m.usage ? m.usage.cache_read_tokens + m.usage.cache_write_tokens : 0

/** Whether the step read less than the previous step left in the cache (null: no usage to tell). */
export function missedCache(meta: StepMeta, prev: StepMeta): boolean | null {
  if (!meta.usage || !prev.usage) return null
  const left = cachedBy(prev)
  // The previous step left nothing it reported cached: a read now is no miss, none cannot be told.
  if (left === 0) return meta.usage.cache_read_tokens > 0 ? false : null
  return meta.usage.cache_read_tokens < MISS_SHARE * left
}

/** Did holdfast itself change `field` on this step (beyond the hold)? */
const changedByProxy = (meta: StepMeta, field: string): boolean =>
  meta.changes.some(
    (c) =>
      (c.field === field || c.field.startsWith(`${field}.`) || c.field.startsWith(`${field}[`)) &&
      !c.why.startsWith('hold'),
  )

/** holdfast's own cause for a miss, from the diff and the clock. */
function ownCause(meta: StepMeta, prev: StepMeta, moves: PrefixMoves): Cause {
  const served = prev.served_model ?? prev.route.model
  const asked = meta.route.model
  if (moves.model) return changedByProxy(meta, 'model') ? 'proxy_rewrite' : 'model_changed'
  if (served && asked && served !== asked && !served.startsWith(asked)) return 'model_changed'
  if (moves.system) return changedByProxy(meta, 'system') ? 'proxy_rewrite' : 'system_prompt_changed'
  if (moves.tools) {
    const t = moves.toolChanges
    const injected = new Set([...meta.injected_tools, ...prev.injected_tools])
    const moved = t ? [...t.added, ...t.removed, ...t.edited] : []
    if (
      moved.length > 0 &&
      moved.every((name) => injected.has(name) || [...injected].some((i) => name.endsWith(`__${i}`)))
    )
      return 'injected'
    return 'tools_changed'
  }
  if (moves.head || moves.difference) return 'messages_rewritten'
  if (moves.keying.length > 0) return 'unknown'
  const ended = Date.parse(prev.ended_at ?? prev.started_at)
  const gap = Date.parse(meta.started_at) - ended
  const long = (prev.usage?.cache_write_1h_tokens ?? 0) > 0
  if (Number.isFinite(gap)) {
    if (gap > 60 * MIN) return long ? 'ttl_expired_1h' : 'ttl_expired_5m'
    if (gap > 5 * MIN && !long) return 'ttl_expired_5m'
  }
  return 'likely_server_side'
}

/** What the provider said, as compared with what holdfast's diff compares (the previous step). */
function providerSaid(
  pc: NonNullable<StepMeta['provider_cache']>,
  previousAnswer: string | null | undefined,
): ProviderSaid {
  const said = pc.said ?? 'nothing'
  const compared = pc.compared_with ?? null
  const word = {
    reason: pc.reason ?? null,
    missed_input_tokens: pc.missed_input_tokens ?? null,
    compared_with: compared,
  }
  if (compared === null && said !== 'reason') return { ...word, said: 'not_compared' }
  if (compared !== null && previousAnswer && compared !== previousAnswer)
    return { ...word, said: 'other', previous_answer: previousAnswer, other_said: said }
  return { ...word, said }
}

export function causeOf(input: CauseInput): CauseReport {
  const { meta, previous } = input
  const pc = meta.provider_cache
  const provider = pc && pc.asked ? providerSaid(pc, previous?.meta.answer_id) : null
  const done = (
    cause: Cause,
    own: Cause = cause,
    missed: boolean | null = null,
    disagree = false,
  ): CauseReport => ({
    cause,
    provider,
    own,
    disagree,
    missed,
  })
  if (input.fork) return done('fork')
  if (input.first) return done('first_step')
  if (meta.hold.applied) return done('held', 'held', previous ? missedCache(meta, previous.meta) : null)
  if (!previous) return done('unknown')
  // A moved prefix is a miss from that point on, whatever a partial read says.
  const m = previous.moves
  const moved = m.model || m.system || m.tools || m.head
  const missed = moved ? true : missedCache(meta, previous.meta)
  const own = missed === false ? 'no_miss' : ownCause(meta, previous.meta, previous.moves)
  const said = provider?.said === 'reason' ? providerCause(provider.reason) : undefined
  // The provider may name a change past what was read (a rewritten tail): quoted, not a miss.
  if (missed === false) return done('no_miss', own, false)
  // With nothing to tell a miss by, only a change in the requests is a cause (not the clock, not the server).
  const guess = own === 'likely_server_side' || own === 'ttl_expired_5m' || own === 'ttl_expired_1h'
  if (said === undefined) return done(missed === null && guess ? 'unknown' : own, own, missed)
  // holdfast's own act refines the provider's word for the same part.
  const refines =
    (own === 'injected' && said === 'tools_changed') ||
    (own === 'proxy_rewrite' && said !== 'messages_rewritten') ||
    // Responses' input_changed covers the instructions too: holdfast's diff names which.
    (own === 'system_prompt_changed' && provider?.reason === 'input_changed')
  const cause = refines ? own : said
  return done(cause, own, missed, !refines && own !== said)
}

/** What each cause means, in a sentence after its name. */
export const CAUSE_WORDS: Readonly<Record<Cause, string>> = {
  system_prompt_changed: 'the system prompt changed',
  tools_changed: 'the tools changed',
  model_changed: 'the model changed (or the last step was served by another)',
  messages_rewritten: 'earlier messages were rewritten',
  ttl_expired_5m: 'the cache expired (more than 5 minutes since the last step)',
  ttl_expired_1h: 'the cache expired (more than an hour since the last step)',
  likely_server_side:
    'the prefix sent was byte-identical, yet the reads collapsed: likely the provider’s side',
  unknown: 'the cause cannot be told from the records',
  held: 'the hold re-sent the previous tools array',
  injected: 'holdfast’s loaded tools changed (a load or an unload)',
  proxy_rewrite: 'holdfast itself changed the prefix (routing, a plugin)',
  fork: 'the first step of an attempt, forked from its notch',
  first_step: 'the agent’s first step: the whole prefix is new',
  no_miss: 'the cache was read as the previous step left it',
}

/** The `why` lines for a cause: its name and meaning, the provider's word verbatim, a disagreement. */
export function causeLines(r: CauseReport): string[] {
  const lines = [`cause: ${r.cause}: ${CAUSE_WORDS[r.cause]}`]
  const p = r.provider
  const word = (said: ProviderSaid['said'] | undefined): string =>
    said === 'reason'
      ? `${p?.reason ?? '(no type)'}${p?.missed_input_tokens != null ? `, ${p.missed_input_tokens} input tokens missed` : ''}`
      : said === 'no_miss'
        ? 'no divergence'
        : said === 'pending'
          ? 'its comparison had not finished (cache_miss_reason null)'
          : 'nothing'
  if (p) {
    if (p.said === 'reason') lines.push(`the provider said: ${word('reason')}`)
    else if (p.said === 'no_miss')
      lines.push('the provider said: no divergence from the step it compared with')
    else if (p.said === 'pending')
      lines.push('the provider said: its comparison had not finished (cache_miss_reason null)')
    else if (p.said === 'not_compared')
      lines.push(
        'the request named no earlier answer (previous_message_id null): the provider compared nothing',
      )
    else if (p.said === 'other')
      lines.push(
        `the provider compared with ${p.compared_with}, not the previous step's answer ${p.previous_answer}, and said: ${word(p.other_said)} (quoted, not the cause)`,
      )
    else lines.push('the provider said nothing about its cache on this step')
  }
  if (r.cause === 'held' && p) {
    lines.push(
      p.said === 'no_miss' || (r.missed === false && p.said !== 'not_compared' && p.said !== 'other')
        ? 'the provider confirmed the held prefix'
        : p.said === 'not_compared' || p.said === 'other'
          ? 'the provider was not asked about the held prefix (no comparison with the previous step)'
          : 'the provider did not confirm the held prefix',
    )
  }
  if (r.disagree)
    lines.push(`holdfast's diff of the two requests says ${r.own} instead: ${CAUSE_WORDS[r.own]}`)
  return lines
}
