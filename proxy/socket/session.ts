/**
 * One client socket and its upstream socket, carried together: each client frame is recorded and
 * sent in the order it came (a `response.create` once the answer before it ended, since its whole
 * conversation continues that answer), each provider event reaches the step it answers, and the
 * pair is closed together, either side first, with the closer's code and reason. Invariant: one
 * step answers at a time; a client that goes away cuts the step in flight (`CLIENT_GONE`) and
 * closes the provider's socket; the provider closing cuts it (`UPSTREAM_FAILED`) and closes the
 * client's; a shutdown closes an idle pair at once and a busy one once its step ends.
 */
import type { WebSocket } from 'ws'
import { readRequest } from '../core/record'
import type { ServerContext } from '../live/context'
import { FrameAnswer } from './answer'
import { prepareCreate, prepareOther, type Prepared, type Refused } from './frame-step'
import { Conversations, type SocketSite } from './site'

/** Buffered bytes toward one side past which the other side is not read (resumed below LOW). */
const HIGH = 8 * 1024 * 1024
const LOW = 1024 * 1024

/** Close codes a peer may send (RFC 6455 §7.4): others (1005 none, 1006 abnormal) are not sent as such. */
const sendable = (code: number): boolean =>
  (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) || (code >= 3000 && code <= 4999)

export class SocketSession {
  private readonly conversations = new Conversations()
  /** Frames go upstream in the order they came. */
  private sending: Promise<unknown> = Promise.resolve()
  /** A create frame waits for the answer before it. */
  private creating: Promise<unknown> = Promise.resolve()
  private answering: FrameAnswer | undefined
  private closed = false

  constructor(
    private readonly ctx: ServerContext,
    readonly site: SocketSite,
    private readonly client: WebSocket,
    private readonly upstream: WebSocket,
    private readonly onEnd: () => void,
  ) {
    client.on('message', (data: Buffer, binary: boolean) => this.fromClient(data, binary))
    upstream.on('message', (data: Buffer, binary: boolean) => this.fromUpstream(data, binary))
    client.on('close', (code: number, reason: Buffer) => this.ended('client', code, reason))
    upstream.on('close', (code: number, reason: Buffer) => this.ended('upstream', code, reason))
    for (const [side, s] of [
      ['client', client],
      ['upstream', upstream],
    ] as const)
      s.on('error', (err: Error) => {
        ctx.log.warn({ socket: site.n, side, err: err.message }, 'a WebSocket failed')
        s.terminate()
      })
    ctx.shutdown.signal.addEventListener('abort', this.onShutdown)
  }

  /** Whether a step is in flight (shutdown closes an idle pair at once). */
  get busy(): boolean {
    return this.answering !== undefined
  }

  /** Close both sides (shutdown: 1001, going away). */
  close(code = 1001, reason = 'holdfast is shutting down'): void {
    this.answering?.cut(
      'interrupted',
      'SHUTDOWN_TIMEOUT',
      `holdfast closed the socket at shutdown: ${reason}`,
    )
    this.client.close(code, reason)
    this.upstream.close(code, reason)
  }

  private readonly onShutdown = (): void => this.close()

  private fromClient(data: Buffer, binary: boolean): void {
    const frames = this.site.frames
    const read = binary ? undefined : readRequest(data, undefined)
    const parsed = read?.ok ? read.value : undefined
    const kind = parsed ? frames.kindOf(parsed) : 'other'
    if (kind === 'processed') {
      // Bookkeeping of the client's (an answer it has taken in): passed on, unrecorded.
      void this.inOrder(Promise.resolve(undefined), () => {
        if (!this.closed) this.upstream.send(data, { binary })
      })
      return
    }
    if (kind === 'other' || !parsed) {
      const type = parsed && typeof parsed.type === 'string' ? parsed.type : undefined
      const prepared = this.ctx.track(prepareOther(this.ctx, this.site, data, binary, type))
      void this.inOrder(prepared, (p) => this.go(p, binary))
      return
    }
    const after = this.creating
    const prepared = this.ctx.track(
      (async () => {
        await after
        return prepareCreate(this.ctx, this.site, (id) => this.conversations.get(id), data, parsed, kind)
      })(),
    )
    const answered = this.inOrder(prepared, (p) => this.go(p, false))
    this.creating = answered.then((a) => a?.ended)
    this.pace(this.upstream, this.client)
  }

  /** Run `then` with what `prepared` gives, after every frame that came before. */
  private inOrder<T, R>(prepared: Promise<T>, then: (p: T) => R): Promise<R | undefined> {
    const turn = this.sending.then(() => prepared).then(then)
    this.sending = turn.catch((err: unknown) =>
      this.ctx.log.error({ socket: this.site.n, err: String(err) }, 'a WebSocket frame failed'),
    )
    return turn
  }

  /** Send a prepared frame (or its refusal, in band); the answer it starts, if any. */
  private go(p: Prepared | Refused, binary: boolean): FrameAnswer | undefined {
    if ('refused' in p) {
      this.toClient(p.refused, false)
      return undefined
    }
    const answer = new FrameAnswer(this.ctx, this.site, p, {
      toClient: (d, b) => this.toClient(d, b),
      toUpstream: (d, b) => this.upstream.send(d, { binary: b }),
      keep: (id, c) => this.conversations.set(id, c),
    })
    void this.ctx.track(answer.ended)
    if (this.closed) {
      // Recorded while the socket closed: it never went out, and its record says so.
      answer.cut('not_sent', 'CLIENT_GONE', 'the socket closed before this frame was sent')
      return answer
    }
    const creates = p.conversation !== undefined
    if (creates) this.answering = answer
    const sent = answer.send(binary)
    if (!sent && creates) this.answering = undefined
    return answer
  }

  private fromUpstream(data: Buffer, binary: boolean): void {
    const a = this.answering
    // An event no step waits for (the provider's own, between answers): passed on, unrecorded.
    if (a?.event(data, binary) === true) {
      this.answering = undefined
      if (this.ctx.closing) void a.ended.then(() => this.close())
    } else if (!a) this.toClient(data, binary)
    this.pace(this.client, this.upstream)
  }

  private toClient(data: Buffer, binary: boolean): void {
    if (this.client.readyState === this.client.OPEN) this.client.send(data, { binary })
  }

  /** Stop reading `from` while `to` has more than HIGH bytes waiting; read it again below LOW. */
  private pace(to: WebSocket, from: WebSocket): void {
    if (to.bufferedAmount < HIGH || from.isPaused) return
    from.pause()
    const check = (): void => {
      if (this.closed || to.bufferedAmount < LOW) from.resume()
      else setTimeout(check, 5)
    }
    setTimeout(check, 5)
  }

  /** One side closed: the step in flight is cut, and the other side closes with its code and reason. */
  private ended(side: 'client' | 'upstream', code: number, reason: Buffer): void {
    if (this.closed) return
    this.closed = true
    this.ctx.shutdown.signal.removeEventListener('abort', this.onShutdown)
    const why = `${code}${reason.length > 0 ? ` ${reason.toString()}` : ''}`
    if (side === 'client')
      this.answering?.cut(
        'aborted',
        'CLIENT_GONE',
        `the client closed the socket mid-answer (${why}); the provider socket was closed`,
      )
    else
      this.answering?.cut(
        'upstream_error',
        'UPSTREAM_FAILED',
        `the provider closed the socket before the answer was whole (${why})`,
      )
    this.answering = undefined
    const other = side === 'client' ? this.upstream : this.client
    if (sendable(code)) other.close(code, reason)
    else if (code === 1005) other.close()
    else other.terminate()
    this.onEnd()
  }
}
