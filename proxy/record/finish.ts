/**
 * The finish half of a record: decode the provider's answer (the client got it as sent), read
 * usage and stop reason from it, price it, and write `response.*` and the completed `meta.json`.
 * Runs in the commit worker (or inline), never on the thread that serves requests. Invariant: the
 * response is written before the meta that names it; a body that cannot be decoded is kept raw
 * and the meta says so.
 */
import fs from 'node:fs'
import path from 'node:path'
import zlib from 'node:zlib'
import { estimateCost } from '../core/cost'
import { dialectByName, type DialectName } from '../dialects'
import type { Price } from '../../generated/holdfast'
import type { StepMeta } from '../../generated/meta'
import { finishRecord, PART_FILE, type ResponseFile } from './journal'

export interface FinishJob {
  dir: string
  dialect: DialectName
  /** The meta with everything but what the answer's body says (usage, cost, stop reason). */
  meta: StepMeta
  /**
   * The answer's bytes as the provider sent them (possibly gzip/br), or none when no answer came
   * or when `streamed` (then they are read from the journal's `response.part`).
   */
  body: Buffer | null
  contentType: string
  contentEncoding: string
  holdApplied: boolean
  prices: Readonly<Record<string, Price>> | undefined
  /** The answer is whole in the journal's `response.part` (read from there; an identity body is renamed, not rewritten). */
  streamed?: boolean
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

/** Complete the meta from the answer and write both files; returns the meta as written. */
export function completeFinish(job: FinishJob): StepMeta {
  const type = job.contentType.toLowerCase()
  const sse = type.includes('text/event-stream')
  const file: ResponseFile = sse ? 'response.sse' : type.includes('json') ? 'response.json' : 'response.txt'
  // Sent from the serving thread, a Buffer arrives as a plain Uint8Array: view it as a Buffer again.
  const raw = job.streamed
    ? fs.readFileSync(path.join(job.dir, PART_FILE))
    : job.body
      ? Buffer.from(job.body.buffer, job.body.byteOffset, job.body.byteLength)
      : null
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
  const renamed = decoded !== null && decoded === raw && job.streamed === true
  finishRecord(
    job.dir,
    decoded ? (renamed ? { file, fromPart: true } : { file, bytes: decoded }) : undefined,
    meta,
  )
  return meta
}
