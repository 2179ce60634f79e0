/**
 * forward and finish: send the recorded bytes to the provider row, stream status, headers and
 * body back unbuffered and byte for byte while teeing a copy into the journal, then hand the
 * answer to the commit worker, which writes the response and the completed meta. Invariant: each
 * chunk reaches the journal before the client, and the answer's completion marker before its
 * end (a kill after the client read the last byte loses nothing); a client that goes away aborts
 * the upstream call; an upstream that fails mid-stream gets the client socket destroyed.
 */
import type { ServerResponse } from 'node:http'
import { once } from 'node:events'
import { performance } from 'node:perf_hooks'
import { HoldfastError } from './core/errors'
import type { StepMeta } from '../generated/meta'
import type { FinishJob } from './store/finish'
import { ResponseTee } from './store/journal'
import type { ServerContext } from './context'
import type { Exchange, Route } from './pipeline'
import { forwardHeaders, responseHeaders } from './upstream'
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
  /** The whole answer is in the journal (its completion marker was written). */
  streamed: boolean
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
    streamed: false,
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
  // Recorded steps tee into the journal; its file is created before the send (the "sent" marker).
  const tee = ex.step ? new ResponseTee(ex.step.dir, ctx.journalFsync) : undefined
  const teeing = (what: () => void): void => {
    try {
      what()
    } catch (err) {
      // The answer still reaches the client; only its copy in the journal is lost.
      ctx.log.error(
        { ws: ex.workspace, agent: ex.agent, err: String(err) },
        'the journal copy of an answer failed',
      )
      tee?.close()
    }
  }
  if (tee) teeing(() => tee.open())
  let up
  try {
    const headers = forwardHeaders(ex.headers, route.url, sent.bytes.length, route.row, route.key)
    up = await ctx.upstream.send(route.url, 'POST', headers, sent.bytes, ac.signal)
  } catch (err) {
    tee?.close()
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
    const complete = (): void => {
      if (!tee || completed) return
      completed = true
      const trailers = trailersOf()
      teeing(() => {
        tee.complete({
          status: up.statusCode,
          headers: up.headers,
          ...(trailers ? { trailers } : {}),
          ttfb_ms: result.ttfbMs === null ? null : round(result.ttfbMs),
          total_ms: round(performance.now() - t0),
          ended_at: new Date().toISOString(),
        })
        result.streamed = true
      })
      tee.close()
    }
    for await (const chunk of up.body as AsyncIterable<Buffer>) {
      result.ttfbMs ??= performance.now() - t0
      chunks.push(chunk)
      if (tee) teeing(() => tee.write(chunk))
      delivered += chunk.length
      if (length !== undefined && delivered >= length) complete()
      if (!res.write(chunk)) await once(res, 'drain', { signal: ac.signal })
    }
    complete()
    const trailers = trailersOf()
    if (trailers) res.addTrailers(trailers)
    res.end()
  } catch (err) {
    tee?.close()
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
  // A whole answer in the journal is read there by the finish; only an untee'd one is kept here.
  if (!result.streamed) result.body = Buffer.concat(chunks)
  return done()
}

export const str = (v: string | string[] | undefined): string => (Array.isArray(v) ? v.join(', ') : (v ?? ''))

/** The provider's response headers as meta.json keeps them: joined, no `set-cookie`. */
export function recordedResponseHeaders(
  headers: Record<string, string | string[] | undefined>,
): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(headers)) if (v !== undefined && k !== 'set-cookie') out[k] = str(v)
  return out
}

/**
 * finish: the meta's finish half as far as the exchange knows it, then the commit worker decodes
 * the answer, reads usage, prices it and writes the files (off this thread); the commit follows.
 */
export async function finish(ctx: ServerContext, ex: Exchange, f: Forwarded): Promise<StepMeta> {
  const step = ex.step as NonNullable<Exchange['step']>
  const sent = ex.sent as NonNullable<Exchange['sent']>
  step.agent.answered(step.n, f.status ?? undefined)
  const job: FinishJob = {
    dir: step.dir,
    dialect: ex.dialect.name,
    meta: {
      ...step.meta,
      ended_at: new Date().toISOString(),
      ttfb_ms: f.ttfbMs === null ? null : round(f.ttfbMs),
      total_ms: round(f.totalMs),
      status: f.status,
      outcome: f.outcome,
      response_headers: recordedResponseHeaders(f.headers),
      error: f.error,
    },
    // Streamed: the worker reads the journal's copy (nothing is cloned across threads).
    body: f.status === null || f.streamed ? null : f.body,
    contentType: str(f.headers['content-type']),
    contentEncoding: str(f.headers['content-encoding']),
    holdApplied: sent.verdict.applied,
    prices: ctx.config.prices,
    streamed: f.streamed,
  }
  const meta = await ctx.committer.finish(job)
  step.meta = meta
  return meta
}

const round = (ms: number): number => Math.round(ms * 100) / 100
