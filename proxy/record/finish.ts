/**
 * The finish half of a record: decode the provider's answer (the client got it as sent), read
 * usage and stop reason from it, price it, and say what the step's `response.*` file holds. Runs
 * in the commit worker (or inline), never on the thread that serves requests; it writes nothing —
 * the commit writes the record. Invariant: a body that cannot be decoded is kept raw and the meta
 * says so; an identity answer is never copied (the commit reads it from the journal).
 */
import zlib from 'node:zlib'
import { estimateCost } from '../core/cost'
import { dialectByName, type DialectName } from '../dialects'
import type { Price } from '../../generated/holdfast'
import type { StepMeta } from '../../generated/meta'
import { type Extent, readPlaced, type ResponseFile } from './journal'

/** Where an answer's bytes are: in the journal (as the provider sent them), or here. */
export type AnswerBytes = { file: string; extents: Extent[] } | { bytes: Buffer }

export interface FinishJob {
  dialect: DialectName
  /** The meta with everything but what the answer's body says (usage, cost, stop reason). */
  meta: StepMeta
  /** The answer as the provider sent it (possibly gzip/br); null when no answer came. */
  answer: AnswerBytes | null
  contentType: string
  contentEncoding: string
  holdApplied: boolean
  prices: Readonly<Record<string, Price>> | undefined
}

/** The finished record's answer half: the meta, and what its `response.*` file holds. */
export interface Finished {
  meta: StepMeta
  response: { file: ResponseFile; bytes: AnswerBytes } | null
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

/** Complete the meta from the answer. */
export function finishStep(job: FinishJob): Finished {
  const type = job.contentType.toLowerCase()
  const sse = type.includes('text/event-stream')
  const file: ResponseFile = sse ? 'response.sse' : type.includes('json') ? 'response.json' : 'response.txt'
  const raw = job.answer ? answerBytes(job.answer) : null
  let decoded = raw
  let decodeError: string | undefined
  if (raw) {
    try {
      decoded = decodeBody(raw, job.contentEncoding)
    } catch (err) {
      decodeError = `the response could not be decoded (${job.contentEncoding}): ${(err as Error).message}`
    }
  }
  const dialect = dialectByName(job.dialect)
  const facts = decoded
    ? dialect.answerFacts(decoded, sse)
    : { usage: null, stopReason: null, streamError: null }
  // A 200 stream that carried an error event failed, whatever its status said.
  const streamFailed = facts.streamError !== null && job.meta.outcome === 'ok'
  const meta: StepMeta = {
    ...job.meta,
    ...(streamFailed ? { outcome: 'upstream_error' as const } : {}),
    response_file: decoded ? file : null,
    usage: facts.usage,
    cost: estimateCost(
      job.meta.route.model,
      facts.usage,
      job.holdApplied,
      job.prices,
      dialect.rows.priceProvider,
    ),
    stop_reason: facts.stopReason,
    error:
      job.meta.error ??
      (decodeError
        ? { code: 'RESPONSE_UNDECODABLE', message: decodeError }
        : facts.streamError
          ? {
              code: 'UPSTREAM_STREAM_ERROR',
              message: `the provider's stream reported ${facts.streamError.type}: ${facts.streamError.message}`,
            }
          : null),
  }
  if (!decoded || !job.answer) return { meta, response: null }
  // Unchanged by decoding: the commit reads it where it is; decoded: the decoded bytes travel.
  return { meta, response: { file, bytes: decoded === raw ? job.answer : { bytes: decoded } } }
}
