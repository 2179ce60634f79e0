/**
 * The finish half of a record: decode the provider's answer (the client got it as sent), read
 * usage, stop reason, its id, the model that served and the provider's word on its cache from it,
 * price it, and say what the step's `response.*` file holds. Runs
 * in the commit worker (or inline), never on the thread that serves requests; it writes nothing —
 * the commit writes the record. Invariant: a body that cannot be decoded is kept raw and the meta
 * says so; an identity answer is never copied (the commit reads it from the journal).
 */
import zlib from 'node:zlib'
import { estimateCost } from '../core/cost'
import { dialectByName, type DialectName } from '../dialects'
import type { CacheWord } from '../core/dialect'
import type { Price } from '../../generated/holdfast'
import type { StepMeta } from '../../generated/meta'
import { type Extent, type ResponseHead, type StepPlace } from './journal/format'
import { readEach, readPlaced } from './journal/reader'
import { type ResponseFile, responseFileFor } from '../core/layout'
import { answeredMeta, type Answered, headerText } from './meta'
import { type SpanAsk, type SpanContent, type SpanFacts, spanFacts } from './span'
import { type Cause, causeOf } from '../core/cache-cause'

/** Where an answer's bytes are: in the journal (as the provider sent them), or here. */
export type AnswerBytes = { file: string; extents: Extent[] } | { bytes: Buffer }

/**
 * One step to finish. The server sends little across threads: where the step is in the journal
 * (its send-half meta, its answer and its HEAD are read there) and how the forward went; the
 * answer's headers travel only when no HEAD holds them.
 */
export interface FinishJob {
  dialect: DialectName
  /** The send half; read from `place.meta` when absent. */
  meta?: StepMeta
  place?: StepPlace
  /** How the forward went; `headers` may be left out when the journal's HEAD has them. */
  answered: Omit<Answered, 'headers'> & { headers?: Answered['headers'] }
  /** The answer as the provider sent it (possibly gzip/br), when the journal does not hold it; null: none came. */
  answer?: AnswerBytes | null
  prices: Readonly<Record<string, Price>> | undefined
  /** Set when telemetry is on: the finish also makes the step's span facts. */
  span?: SpanAsk
}

/** What the server needs to know of a finished step (its log line, the plugins' onResponse). */
export interface FinishSummary {
  status: number | null
  outcome: StepMeta['outcome']
  error: StepMeta['error']
  usage: StepMeta['usage']
  cost: StepMeta['cost']
  stop_reason: StepMeta['stop_reason']
  ttfb_ms: StepMeta['ttfb_ms']
  response_file: StepMeta['response_file']
  /** The provider's id of the answer (what a next request's diagnostics names), when it gave one. */
  answer_id?: string | null
  /** The step's span, when its finish was asked for one (telemetry on). */
  span?: SpanFacts
}

export const summaryOf = (m: StepMeta): FinishSummary => ({
  status: m.status ?? null,
  outcome: m.outcome,
  error: m.error ?? null,
  usage: m.usage ?? null,
  cost: m.cost ?? null,
  stop_reason: m.stop_reason ?? null,
  ttfb_ms: m.ttfb_ms ?? null,
  response_file: m.response_file ?? null,
  answer_id: m.answer_id ?? null,
})

/** The summary the server hears of a finished step, its span with it when one was made. */
export const summaryFor = (f: Finished): FinishSummary => ({
  ...summaryOf(f.meta),
  ...(f.span ? { span: f.span } : {}),
})

/** The finished record's answer half: the meta, what its `response.*` file holds, its span when asked. */
export interface Finished {
  meta: StepMeta
  response: { file: ResponseFile; bytes: AnswerBytes } | null
  span?: SpanFacts
}

/**
 * Each agent's last finished meta (by `<ws>\0<agent>`), where its finishes run: the next step's
 * cause reads it. Steps of an agent finish in order; at most MAX_AGENTS_KEPT, oldest dropped first.
 */
const lastFinished = new Map<string, StepMeta>()
const MAX_AGENTS_KEPT = 1024

/**
 * The step's cause (core/cache-cause) from the meta finished before it and what moved (the
 * server's, with the job): undefined when either is missing, or the meta kept is not the step before.
 */
function causeFor(job: FinishJob, meta: StepMeta): Cause | undefined {
  const key = `${meta.workspace}\0${meta.agent}`
  const prev = lastFinished.get(key)
  lastFinished.delete(key)
  lastFinished.set(key, meta)
  if (lastFinished.size > MAX_AGENTS_KEPT) lastFinished.delete(lastFinished.keys().next().value as string)
  const n = Number(meta.step)
  if (n === 1) return causeOf({ meta, first: true }).cause
  const moves = job.span?.moves
  if (!moves || !prev || Number(prev.step) !== n - 1) return undefined
  return causeOf({ meta, previous: { meta: prev, moves } }).cause
}

/** The span of a finished step, when its job asked for one; its content read only when asked. */
export function spanOf(job: FinishJob, meta: StepMeta, content?: () => SpanContent): SpanFacts | undefined {
  if (!job.span) return undefined
  const provider = dialectByName(job.dialect).rows.name
  const content_ = job.span.capture && content ? content() : undefined
  return spanFacts(meta, provider, job.span, content_, causeFor(job, meta))
}

/** The request's body, parsed, for a span that captures content (undefined when it cannot be read). */
function requestBody(place: StepPlace | undefined): SpanContent['request'] {
  if (!place) return undefined
  try {
    const v: unknown = JSON.parse((readEach(place.file, [[place.request]])[0] as Buffer).toString('utf8'))
    return v !== null && typeof v === 'object' && !Array.isArray(v)
      ? (v as SpanContent['request'])
      : undefined
  } catch {
    return undefined
  }
}

/** Decode a body by its content-encoding, for the record and usage (the client got the raw bytes). */
export function decodeBody(body: Buffer, encoding: string): Buffer {
  const enc = encoding.trim().toLowerCase()
  if (!enc || enc === 'identity' || body.length === 0) return body
  if (enc === 'gzip' || enc === 'x-gzip') return zlib.gunzipSync(body)
  if (enc === 'br') return zlib.brotliDecompressSync(body)
  if (enc === 'deflate') return zlib.inflateSync(body)
  return body
}

/** The bytes an AnswerBytes names (a Buffer sent between threads arrives as a Uint8Array: viewed as one again). */
export function answerBytes(a: AnswerBytes): Buffer {
  if ('file' in a) return readPlaced(a.file, a.extents)
  return Buffer.from(a.bytes.buffer, a.bytes.byteOffset, a.bytes.byteLength)
}

/**
 * The send half and the HEAD of a step, read from the journal where the job does not carry them,
 * and the answer's bytes: what the journal holds is read through one descriptor.
 */
function journaled(
  job: FinishJob,
  answer: AnswerBytes | null,
): { sent: StepMeta; head: ResponseHead | undefined; raw: Buffer | null } {
  const p = job.place
  const wantMeta = !job.meta && p !== undefined
  const wantHead = p?.head !== undefined && !job.answered.headers
  const inFile = answer !== null && 'file' in answer && answer.file === p?.file
  const want = [
    ...(wantMeta ? [[p.meta]] : []),
    ...(wantHead && p.head ? [[p.head]] : []),
    ...(inFile ? [answer.extents] : []),
  ]
  const read = p && want.length > 0 ? readEach(p.file, want) : []
  const sent = job.meta ?? (JSON.parse((read.shift() as Buffer).toString('utf8')) as StepMeta)
  const headBytes = wantHead ? read.shift() : undefined
  const raw = inFile ? (read.shift() as Buffer) : answer ? answerBytes(answer) : null
  return { sent, head: headBytes ? (JSON.parse(headBytes.toString('utf8')) as ResponseHead) : undefined, raw }
}

/** The send half's provider_cache with what the answer said (`nothing` when it carried no verdict). */
function providerCacheOf(
  sent: StepMeta['provider_cache'],
  word: CacheWord | undefined,
): NonNullable<StepMeta['provider_cache']> {
  const asked = sent ?? { asked: false, compared_with: null }
  if (!word) return { ...asked, said: 'nothing', reason: null, missed_input_tokens: null }
  return {
    ...asked,
    said: word.said,
    reason: word.reason,
    missed_input_tokens: word.missedInputTokens,
    raw: word.raw,
  }
}

/** Complete the meta from the answer. */
export function finishStep(job: FinishJob): Finished {
  const answer =
    job.answer !== undefined
      ? job.answer
      : job.place && job.place.chunks.length > 0
        ? { file: job.place.file, extents: job.place.chunks }
        : null
  const { sent, head, raw } = journaled(job, answer)
  const headers = job.answered.headers ?? head?.headers ?? {}
  const a: Answered = { ...job.answered, headers, ...(head ? { endedAt: head.ended_at } : {}) }
  const answered = answeredMeta(sent, a)
  // A WebSocket step's answer is its events, written as an event stream (docs/records.md).
  const type = sent.websocket ? 'text/event-stream' : headerText(headers['content-type']).toLowerCase()
  const encoding = sent.websocket ? '' : headerText(headers['content-encoding'])
  const sse = type.includes('text/event-stream')
  const file: ResponseFile = responseFileFor(type)
  let decoded = raw
  let decodeError: string | undefined
  if (raw) {
    try {
      decoded = decodeBody(raw, encoding)
    } catch (err) {
      decodeError = `the response could not be decoded (${encoding}): ${(err as Error).message}`
    }
  }
  const dialect = dialectByName(job.dialect)
  const facts = decoded
    ? dialect.answerFacts(decoded, sse)
    : { usage: null, stopReason: null, streamError: null }
  // A 200 stream that carried an error event failed, whatever its status said.
  const streamFailed = facts.streamError !== null && answered.outcome === 'ok'
  const meta: StepMeta = {
    ...answered,
    ...(streamFailed ? { outcome: 'upstream_error' as const } : {}),
    response_file: decoded ? file : null,
    usage: facts.usage,
    cost: estimateCost(
      answered.route.model,
      facts.usage,
      answered.hold.applied,
      job.prices,
      dialect.rows.priceProvider,
    ),
    stop_reason: facts.stopReason,
    ...(decoded ? { answer_id: facts.id ?? null, served_model: facts.model ?? null } : {}),
    provider_cache: providerCacheOf(answered.provider_cache, facts.word),
    error:
      answered.error ??
      (decodeError
        ? { code: 'RESPONSE_UNDECODABLE', message: decodeError }
        : facts.streamError
          ? {
              code: 'UPSTREAM_STREAM_ERROR',
              message: `the provider's stream reported ${facts.streamError.type}: ${facts.streamError.message}`,
            }
          : null),
  }
  const span = spanOf(job, meta, () => ({
    request: requestBody(job.place),
    reply: decoded && !decodeError ? dialect.rebuildReply(decoded, sse) : undefined,
  }))
  const spanned = span ? { span } : {}
  if (!decoded || !answer) return { meta, response: null, ...spanned }
  // Unchanged by decoding: the commit reads it where it is; decoded: the decoded bytes travel.
  return { meta, response: { file, bytes: decoded === raw ? answer : { bytes: decoded } }, ...spanned }
}
