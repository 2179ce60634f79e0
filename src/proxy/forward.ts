/**
 * forward and finish: send the recorded bytes to the provider row, stream status, headers and
 * body back unbuffered and byte for byte while teeing a copy, then write the response and the
 * completed meta and queue the commit. Invariant: a client that goes away aborts the upstream
 * call; an upstream that fails mid-stream gets the client socket destroyed, never more bytes.
 */
import type { ServerResponse } from 'node:http'
import { once } from 'node:events'
import { performance } from 'node:perf_hooks'
import { promisify } from 'node:util'
import zlib from 'node:zlib'
import { HoldfastError } from '../core/errors'
import { estimateCost } from '../core/cost'
import type { StepMeta } from '../generated/meta'
import { finishRecord, type ResponseFile } from '../store/journal'
import type { ServerContext } from './context'
import type { Exchange, Route } from './pipeline'
import { answerFacts } from './usage'
import { forwardHeaders, responseHeaders, rowKey } from './upstream'
import { sendError } from './respond'

export type Outcome = NonNullable<StepMeta['outcome']>

export interface Forwarded {
  outcome: Outcome
  status: number | null
  headers: Record<string, string | string[] | undefined>
  body: Buffer
  ttfbMs: number | null
  totalMs: number
  error: { code: string; message: string } | null
}

const gunzip = promisify(zlib.gunzip)
const brotli = promisify(zlib.brotliDecompress)
const inflate = promisify(zlib.inflate)

/** Decode a body by its content-encoding, for the record and usage (the client got the raw bytes). */
export async function decodeBody(body: Buffer, encoding: string | string[] | undefined): Promise<Buffer> {
  const enc = (Array.isArray(encoding) ? encoding.join(',') : (encoding ?? '')).trim().toLowerCase()
  if (!enc || enc === 'identity' || body.length === 0) return body
  if (enc === 'gzip' || enc === 'x-gzip') return gunzip(body)
  if (enc === 'br') return brotli(body)
  if (enc === 'deflate') return inflate(body)
  return body
}

/** Send `ex.sent` upstream and stream the answer to `res`. Never throws. */
export async function forward(ctx: ServerContext, ex: Exchange, res: ServerResponse): Promise<Forwarded> {
  const route = ex.route as Route
  const sent = ex.sent as NonNullable<Exchange['sent']>
  const t0 = performance.now()
  const result: Forwarded = {
    outcome: 'ok',
    status: null,
    headers: {},
    body: Buffer.alloc(0),
    ttfbMs: null,
    totalMs: 0,
    error: null,
  }
  const ac = new AbortController()
  const onClose = (): void => {
    if (!res.writableFinished) ac.abort()
  }
  res.on('close', onClose)
  const done = (): Forwarded => {
    result.totalMs = performance.now() - t0
    res.off('close', onClose)
    return result
  }
  if (res.destroyed) {
    result.outcome = 'aborted'
    result.error = { code: 'CLIENT_GONE', message: 'the client went away before the request was sent' }
    return done()
  }
  let up
  try {
    const key = rowKey(route.provider, route.row)
    const headers = forwardHeaders(ex.headers, route.url, sent.bytes.length, route.row, key)
    up = await ctx.upstream.send(route.url, 'POST', headers, sent.bytes, ac.signal)
  } catch (err) {
    if (ac.signal.aborted) {
      result.outcome = 'aborted'
      result.error = { code: 'CLIENT_GONE', message: 'the client went away before the provider answered' }
      return done()
    }
    const e =
      err instanceof HoldfastError
        ? err
        : new HoldfastError(
            'UPSTREAM_UNREACHABLE',
            `provider row "${route.provider}" at ${route.url.origin} could not be reached: ${(err as Error).message}`,
            { cause: err },
          )
    result.outcome = 'unreachable'
    result.error = { code: e.code, message: e.message }
    sendError(res, ex.dialect, e)
    return done()
  }
  result.status = up.statusCode
  result.headers = up.headers
  result.outcome = up.statusCode >= 400 ? 'upstream_error' : 'ok'
  const chunks: Buffer[] = []
  try {
    res.writeHead(up.statusCode, responseHeaders(up.headers))
    // An event stream's headers go out at once (the client sees the answer start); a JSON answer's
    // go out with its first bytes, in one write.
    if (String(up.headers['content-type'] ?? '').includes('text/event-stream')) res.flushHeaders()
    for await (const chunk of up.body as AsyncIterable<Buffer>) {
      result.ttfbMs ??= performance.now() - t0
      chunks.push(chunk)
      if (!res.write(chunk)) await once(res, 'drain', { signal: ac.signal })
    }
    res.end()
  } catch (err) {
    if (ac.signal.aborted) {
      result.outcome = 'aborted'
      result.error = {
        code: 'CLIENT_GONE',
        message: 'the client went away mid-answer; the provider call was aborted',
      }
    } else {
      result.outcome = 'upstream_error'
      result.error = {
        code: 'UPSTREAM_FAILED',
        message: `the provider's answer failed mid-stream: ${(err as Error).message}`,
      }
      res.destroy()
    }
    up.body.destroy()
  }
  result.body = Buffer.concat(chunks)
  return done()
}

const str = (v: string | string[] | undefined): string => (Array.isArray(v) ? v.join(', ') : (v ?? ''))

/** finish: write the response and the completed meta, then let the commit go. */
export async function finish(ctx: ServerContext, ex: Exchange, f: Forwarded): Promise<StepMeta> {
  const step = ex.step as NonNullable<Exchange['step']>
  const sent = ex.sent as NonNullable<Exchange['sent']>
  const type = str(f.headers['content-type']).toLowerCase()
  const sse = type.includes('text/event-stream')
  let decoded = f.body
  let decodeError: string | undefined
  try {
    decoded = await decodeBody(f.body, f.headers['content-encoding'])
  } catch (err) {
    decodeError = `the response could not be decoded (${str(f.headers['content-encoding'])}): ${(err as Error).message}`
  }
  const file: ResponseFile = sse ? 'response.sse' : type.includes('json') ? 'response.json' : 'response.txt'
  const facts =
    f.status === null ? { usage: null, stopReason: null } : answerFacts(ex.dialect.name, decoded, sse)
  const responseHeadersRecorded: Record<string, string> = {}
  for (const [k, v] of Object.entries(f.headers))
    if (v !== undefined && k !== 'set-cookie') responseHeadersRecorded[k] = str(v)
  const meta: StepMeta = {
    ...step.meta,
    ended_at: new Date().toISOString(),
    ttfb_ms: f.ttfbMs === null ? null : round(f.ttfbMs),
    total_ms: round(f.totalMs),
    status: f.status,
    outcome: f.outcome,
    response_file: f.status === null ? null : file,
    response_headers: responseHeadersRecorded,
    usage: facts.usage,
    cost: estimateCost(step.meta.route.model, facts.usage, sent.verdict.applied, ctx.config.prices),
    stop_reason: facts.stopReason,
    error: f.error ?? (decodeError ? { code: 'RESPONSE_UNDECODABLE', message: decodeError } : null),
  }
  await finishRecord(step.dir, f.status === null ? undefined : { file, bytes: decoded }, meta)
  step.agent.answered(step.n, f.status ?? undefined)
  step.meta = meta
  return meta
}

const round = (ms: number): number => Math.round(ms * 100) / 100
