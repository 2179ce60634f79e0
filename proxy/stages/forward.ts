/**
 * forward (DESIGN §5.7): send what the hold decided to the provider row, stream status, headers
 * and body back unbuffered and byte for byte while teeing a copy into the journal. Invariant: each
 * chunk reaches the journal before the client, and the answer's completion marker before its end
 * (a kill after the client read the last byte loses nothing); a client that goes away aborts the
 * upstream call; an upstream that fails mid-stream gets the client socket destroyed; a shutdown
 * that stops waiting aborts it too, and the step is recorded as interrupted (`SHUTDOWN_TIMEOUT`),
 * the client answered 503 when nothing was sent yet, else cut. Never throws.
 */
import type { ServerResponse } from 'node:http'
import { once } from 'node:events'
import { performance } from 'node:perf_hooks'
import { HoldfastError } from '../core/errors'
import type { Outcome } from '../record'
import type { ResponseHead } from '../record/journal/format'
import type { ServerContext } from '../live/context'
import { forwardHeaders, responseHeaders } from '../http/upstream'
import { sendError } from '../http/respond'
import type { Accepted } from './accept'
import type { Held } from './hold'
import type { Recorded } from './record'
import type { Route } from './resolve'

/** forward's value: what the provider answered and how it went. */
export interface Forwarded {
  outcome: Outcome
  status: number | null
  headers: Record<string, string | string[] | undefined>
  body: Buffer
  ttfbMs: number | null
  totalMs: number
  error: { code: string; message: string } | null
  /** The whole answer is in the journal (its completion marker was written). */
  streamed: boolean
}

/** Send `held` upstream and stream the answer to `res`, teed into `step`'s journal when recorded. */
export async function forward(
  ctx: ServerContext,
  request: Accepted,
  route: Route,
  held: Held,
  step: Recorded | undefined,
  res: ServerResponse,
): Promise<Forwarded> {
  const t0 = performance.now()
  const result: Forwarded = {
    outcome: 'ok',
    status: null,
    headers: {},
    body: Buffer.alloc(0),
    ttfbMs: null,
    totalMs: 0,
    error: null,
    streamed: false,
  }
  const ac = new AbortController()
  const onClose = (): void => {
    if (!res.writableFinished) ac.abort()
  }
  const stopping = ctx.shutdown.signal
  const onShutdown = (): void => ac.abort(SHUTDOWN)
  res.on('close', onClose)
  stopping.addEventListener('abort', onShutdown)
  const done = (): Forwarded => {
    result.totalMs = performance.now() - t0
    res.off('close', onClose)
    stopping.removeEventListener('abort', onShutdown)
    return result
  }
  /** The call was aborted by shutdown (not by the client): recorded as such, the client told when it can be. */
  const cutByShutdown = (sent: boolean): boolean => {
    if (ac.signal.reason !== SHUTDOWN) return false
    result.outcome = sent ? 'interrupted' : 'not_sent'
    result.error = {
      code: 'SHUTDOWN_TIMEOUT',
      message: sent
        ? 'holdfast stopped waiting for this step at shutdown (timeouts.shutdown_ms); the provider call was aborted'
        : 'holdfast was shutting down; the step was not sent',
    }
    if (!res.headersSent)
      sendError(
        res,
        request.dialect,
        new HoldfastError(
          'SHUTTING_DOWN',
          'holdfast is shutting down; this step was cut short, retry shortly',
        ),
      )
    else res.destroy()
    return true
  }
  if (stopping.aborted) onShutdown()
  if (cutByShutdown(false)) return done()
  if (res.destroyed) {
    result.outcome = 'aborted'
    result.error = { code: 'CLIENT_GONE', message: 'the client went away before the request was sent' }
    return done()
  }
  // Recorded steps tee into the journal: SENT before the send, each chunk, HEAD before the end.
  let tee = step?.entry
  const teeing = (what: () => void): void => {
    try {
      what()
    } catch (err) {
      // The answer still reaches the client; only its copy in the journal is lost.
      ctx.log.error(
        { ws: step?.workspace, agent: step?.agent.name, err: String(err) },
        'the journal copy of an answer failed',
      )
      tee = undefined
    }
  }
  if (tee) {
    try {
      tee.sent()
    } catch (err) {
      // Without its SENT frame the record would say the request never went: it does not go.
      const e = new HoldfastError(
        'RECORD_WRITE_FAILED',
        `the record of step ${step?.meta.step} could not be written; nothing was sent`,
        { cause: err },
      )
      result.outcome = 'not_sent'
      result.error = { code: e.code, message: `${e.message} (${(err as Error).message})` }
      sendError(res, request.dialect, e)
      return done()
    }
  }
  let up
  try {
    const headers = forwardHeaders(request.headers, route.url, held.bytes.length, route.row, route.key)
    up = await ctx.upstream.send(route.url, 'POST', headers, held.bytes, ac.signal)
  } catch (err) {
    if (cutByShutdown(true)) return done()
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
    sendError(res, request.dialect, e)
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
    // The client knows the answer is whole at its last byte when the length is declared, else at
    // the end: the completion marker must reach the journal before whichever comes first.
    const declared = Number(up.headers['content-length'])
    const length = Number.isSafeInteger(declared) && declared >= 0 ? declared : undefined
    let delivered = 0
    let completed = false
    // undici fills the trailers in once the body has ended (none for a body of declared length).
    const trailersOf = (): Record<string, string> | undefined => {
      const t = up.trailers as Record<string, string> | undefined
      return t && Object.keys(t).length > 0 ? t : undefined
    }
    const head = (): Omit<ResponseHead, 'bytes'> => {
      const trailers = trailersOf()
      return {
        status: up.statusCode,
        headers: up.headers,
        ...(trailers ? { trailers } : {}),
        ttfb_ms: result.ttfbMs === null ? null : round(result.ttfbMs),
        total_ms: round(performance.now() - t0),
        ended_at: new Date().toISOString(),
      }
    }
    /** The answer is whole: its HEAD goes in, with `last` (the piece that made it whole) in the same write. */
    const complete = (last?: Buffer): void => {
      if (!tee || completed) return
      completed = true
      teeing(() => {
        if (last) tee?.chunk(last, head())
        else tee?.head(head())
        result.streamed = true
      })
    }
    for await (const chunk of up.body as AsyncIterable<Buffer>) {
      result.ttfbMs ??= performance.now() - t0
      chunks.push(chunk)
      delivered += chunk.length
      if (length !== undefined && delivered >= length && tee && !completed) complete(chunk)
      else if (tee) teeing(() => tee?.chunk(chunk))
      if (!res.write(chunk)) await once(res, 'drain', { signal: ac.signal })
    }
    complete()
    const trailers = trailersOf()
    if (trailers) res.addTrailers(trailers)
    res.end()
  } catch (err) {
    if (cutByShutdown(true)) {
      // nothing more: recorded as interrupted, the client cut
    } else if (ac.signal.aborted) {
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
  // A whole answer in the journal is read there by the finish; only an untee'd one is kept here.
  if (!result.streamed) result.body = Buffer.concat(chunks)
  return done()
}

const round = (ms: number): number => Math.round(ms * 100) / 100

/** The abort reason of a shutdown that stopped waiting (told apart from a client that went away). */
const SHUTDOWN = new Error('holdfast stopped waiting at shutdown')
