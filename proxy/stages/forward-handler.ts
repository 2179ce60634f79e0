/**
 * forward's events, shaped as undici's RequestHandler (`lib/api/api-request.js`): one method per
 * thing that happens to a provider call, each setting the one outcome it means and answering the
 * client as that outcome needs. stages/forward calls them in order — onSend, then onHeaders,
 * onChunk for each piece and onComplete, or one of onError, onClientGone, onShutdown instead —
 * and record/journal/tee keeps the journal's side. Invariant: an event that ends the call
 * (onComplete, onError, onClientGone, onShutdown, a refused onSend) is the last one; the client
 * is answered in the dialect's envelope only while nothing of the provider's answer went out,
 * and cut (its socket destroyed) after, never ended as if whole.
 */
import type { ServerResponse } from 'node:http'
import { performance } from 'node:perf_hooks'
import { HoldfastError } from '../core/errors'
import type { Dialect } from '../core/dialect'
import type { Outcome } from '../record'
import type { Head, JournalTee } from '../record/journal/tee'
import { sendError } from '../http/respond'
import { responseHeaders } from '../http/upstream'
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

/** The provider's answer as far as its headers (undici's response before its body). */
export interface UpstreamHead {
  statusCode: number
  headers: Record<string, string | string[] | undefined>
}

export class ForwardHandler {
  readonly result: Forwarded = {
    outcome: 'ok',
    status: null,
    headers: {},
    body: Buffer.alloc(0),
    ttfbMs: null,
    totalMs: 0,
    error: null,
    streamed: false,
  }
  private readonly t0 = performance.now()
  private readonly chunks: Buffer[] = []
  /** onSend let the request go. */
  private sending = false

  constructor(
    private readonly res: ServerResponse,
    private readonly dialect: Dialect,
    private readonly route: Pick<Route, 'provider' | 'url'>,
    /** The journal's side of a recorded step; none for an unrecorded call (count_tokens). */
    private readonly tee: JournalTee | undefined,
    /** The step's number as the client reads it, for a refusal's message. */
    private readonly step?: string,
  ) {}

  /** The request is about to go: SENT into the journal. False: it cannot be, so nothing goes (not_sent). */
  onSend(): boolean {
    try {
      this.tee?.sent()
      this.sending = true
      return true
    } catch (err) {
      // Without its SENT frame the record would say the request never went: it does not go.
      const e = new HoldfastError(
        'RECORD_WRITE_FAILED',
        `the record of step ${this.step} could not be written; nothing was sent`,
        { cause: err },
      )
      this.result.outcome = 'not_sent'
      this.result.error = { code: e.code, message: `${e.message} (${(err as Error).message})` }
      sendError(this.res, this.dialect, e)
      return false
    }
  }

  /** The provider's status and headers: passed on (an event stream's at once); ok, or upstream_error from 400. */
  onHeaders(up: UpstreamHead): void {
    const r = this.result
    r.status = up.statusCode
    r.headers = up.headers
    r.outcome = up.statusCode >= 400 ? 'upstream_error' : 'ok'
    this.res.writeHead(up.statusCode, responseHeaders(up.headers))
    // An event stream's headers go out at once (the client sees the answer start); a JSON answer's
    // go out with its first bytes, in one write.
    if (String(up.headers['content-type'] ?? '').includes('text/event-stream')) this.res.flushHeaders()
    // The client knows the answer is whole at its last byte when the length is declared.
    const declared = Number(up.headers['content-length'])
    this.tee?.expect(Number.isSafeInteger(declared) && declared >= 0 ? declared : undefined)
  }

  /** A piece of the answer: into the journal, then to the client. False: wait for the client's drain. */
  onChunk(chunk: Buffer): boolean {
    this.result.ttfbMs ??= performance.now() - this.t0
    this.chunks.push(chunk)
    this.tee?.chunk(chunk, () => this.head())
    return this.res.write(chunk)
  }

  /** The answer is whole: HEAD into the journal before the client sees the end, then trailers and the end. */
  onComplete(trailers?: Record<string, string>): void {
    const t = trailers && Object.keys(trailers).length > 0 ? trailers : undefined
    this.tee?.end(() => this.head(t))
    if (t) this.res.addTrailers(t)
    this.res.end()
  }

  /**
   * The provider failed: before its headers it could not be reached (502 in the envelope,
   * unreachable); after them its answer broke off (the client cut, upstream_error).
   */
  onError(err: unknown): void {
    const r = this.result
    if (r.status !== null) {
      r.outcome = 'upstream_error'
      r.error = {
        code: 'UPSTREAM_FAILED',
        message: `the provider's answer failed mid-stream: ${(err as Error).message}`,
      }
      this.res.destroy()
      return
    }
    const e =
      err instanceof HoldfastError
        ? err
        : new HoldfastError(
            'UPSTREAM_UNREACHABLE',
            `provider row "${this.route.provider}" at ${this.route.url.origin} could not be reached: ${(err as Error).message}`,
            { cause: err },
          )
    r.outcome = 'unreachable'
    r.error = { code: e.code, message: e.message }
    sendError(this.res, this.dialect, e)
  }

  /** The client went away (before the send, before the answer, or mid-answer): aborted, the call with it. */
  onClientGone(): void {
    this.result.outcome = 'aborted'
    this.result.error = {
      code: 'CLIENT_GONE',
      message:
        this.result.status !== null
          ? 'the client went away mid-answer; the provider call was aborted'
          : this.sending
            ? 'the client went away before the provider answered'
            : 'the client went away before the request was sent',
    }
  }

  /**
   * Shutdown stopped waiting (`timeouts.shutdown_ms`): interrupted once the request went out,
   * not_sent before; the client answered 503 while nothing was sent to it, else cut.
   */
  onShutdown(sent: boolean): void {
    const r = this.result
    r.outcome = sent ? 'interrupted' : 'not_sent'
    r.error = {
      code: 'SHUTDOWN_TIMEOUT',
      message: sent
        ? 'holdfast stopped waiting for this step at shutdown (timeouts.shutdown_ms); the provider call was aborted'
        : 'holdfast was shutting down; the step was not sent',
    }
    if (this.res.headersSent) this.res.destroy()
    else
      sendError(
        this.res,
        this.dialect,
        new HoldfastError(
          'SHUTTING_DOWN',
          'holdfast is shutting down; this step was cut short, retry shortly',
        ),
      )
  }

  /** The call is over: its timing, and the answer's bytes when the journal does not hold them whole. */
  done(): Forwarded {
    const r = this.result
    r.totalMs = performance.now() - this.t0
    r.streamed = this.tee?.whole ?? false
    // A whole answer in the journal is read there by the finish; only an untee'd one is kept here.
    if (!r.streamed && this.chunks.length > 0) r.body = Buffer.concat(this.chunks)
    return r
  }

  /** HEAD as it stands now (the size is the tee's). */
  private head(trailers?: Record<string, string>): Head {
    const r = this.result
    return {
      status: r.status as number,
      headers: r.headers,
      ...(trailers ? { trailers } : {}),
      ttfb_ms: r.ttfbMs === null ? null : round(r.ttfbMs),
      total_ms: round(performance.now() - this.t0),
      ended_at: new Date().toISOString(),
    }
  }
}

const round = (ms: number): number => Math.round(ms * 100) / 100
