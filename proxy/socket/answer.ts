/**
 * A recorded frame's send and its answer: the SENT frame, the frame upstream, then each event of
 * the answer teed into the journal before it reaches the client (as one event of an event stream:
 * `event: <type>` and the event's bytes as its `data:`, so `response.sse` reads as an HTTP stream
 * does), the terminal event with the completion marker in the same write; then the step is
 * finished and committed like any (stages/finish). Invariant: an event the client received is in
 * the journal; a frame whose SENT frame cannot be written is not sent; exactly one finish per step.
 */
import { performance } from 'node:perf_hooks'
import { HoldfastError } from '../core/errors'
import type { Json } from '../core/json'
import type { SocketConversation } from '../core/dialect'
import type { ResponseHead } from '../record/journal/format'
import type { JournalEntry } from '../record'
import type { ServerContext } from '../live/context'
import { finish } from '../stages/finish'
import type { Forwarded } from '../stages/forward'
import type { Prepared } from './frame-step'
import { refusal } from './frame-step'
import type { SocketSite } from './site'

/** Where an answer's messages go: the client, and the provider. */
export interface Outlets {
  toClient(data: Buffer, binary: boolean): void
  toUpstream(data: Buffer, binary: boolean): void
  /** An answer ended that a later frame may continue: the socket holds its conversation. */
  keep(id: string, conversation: SocketConversation): void
}

/** One message of the socket as an event of an event stream (a binary one base64, as `websocket.binary`). */
export function sseChunk(type: string | undefined, data: Buffer, binary: boolean): Buffer {
  if (binary) return Buffer.from(`event: websocket.binary\ndata: ${data.toString('base64')}\n\n`)
  const name = type !== undefined && /^[\w.-]+$/.test(type) ? type : 'websocket.text'
  // An event is one line as providers send it; a line break inside one starts another `data:` line.
  const text = data.includes(0x0a) ? data.toString('utf8').split(/\r?\n/).join('\ndata: ') : undefined
  return Buffer.concat([
    Buffer.from(`event: ${name}\ndata: `),
    text === undefined ? data : Buffer.from(text),
    Buffer.from('\n\n'),
  ])
}

const round = (ms: number): number => Math.round(ms * 100) / 100

export class FrameAnswer {
  private readonly t0 = performance.now()
  private ttfb: number | null = null
  private readonly chunks: Buffer[] = []
  private readonly items: Json[] = []
  private tee: JournalEntry | undefined
  private whole = false
  private status: number | null = null
  private finished = false
  private done!: () => void
  /** Settles when the step is finished (its commit queued): a later create frame may go. */
  readonly ended = new Promise<void>((r) => (this.done = r))

  constructor(
    private readonly ctx: ServerContext,
    private readonly site: SocketSite,
    private readonly prepared: Prepared,
    private readonly out: Outlets,
  ) {
    this.tee = prepared.step.entry
  }

  /** Write SENT and send the frame; false when the record could not say so (then nothing is sent). */
  send(binary: boolean): boolean {
    try {
      this.prepared.step.entry.sent()
    } catch (err) {
      const e = new HoldfastError(
        'RECORD_WRITE_FAILED',
        `the record of step ${this.prepared.step.meta.step} could not be written; nothing was sent`,
        { cause: err },
      )
      this.out.toClient(refusal(this.site, e).refused, false)
      this.settle('not_sent', { code: e.code, message: `${e.message} (${(err as Error).message})` })
      return false
    }
    this.out.toUpstream(this.prepared.wire, binary)
    // A frame that is no create has no answer of its own: its step ends as it went.
    if (this.prepared.conversation === undefined) this.settle('ok', null)
    return true
  }

  /** One event of the answer; true when it made the answer whole. */
  event(data: Buffer, binary: boolean): boolean {
    this.ttfb ??= performance.now() - this.t0
    this.status ??= 200
    const frames = this.site.frames
    const type = binary ? undefined : frames.eventType(data)
    const e = frames.eventOf(type, () => parseObject(data))
    const chunk = sseChunk(type, data, binary)
    this.chunks.push(chunk)
    if (e.kind === 'ended') {
      this.status = e.status
      this.teeing(() => this.tee?.chunk(chunk, this.head()))
      this.whole = this.tee !== undefined
    } else {
      if (e.kind === 'item') this.items[e.at ?? this.items.length] = e.item
      this.teeing(() => this.tee?.chunk(chunk))
    }
    this.out.toClient(data, binary)
    if (e.kind !== 'ended') return false
    const conversation = this.prepared.conversation
    if (e.kept && e.id !== undefined && conversation)
      this.out.keep(
        e.id,
        frames.continued(conversation, e.output ?? this.items.filter((i) => i !== undefined)),
      )
    this.settle(e.status >= 400 ? 'upstream_error' : 'ok', null)
    return true
  }

  /** The socket ended before the answer did: how, and why. */
  cut(
    outcome: 'aborted' | 'upstream_error' | 'interrupted' | 'not_sent',
    code: string,
    message: string,
  ): void {
    this.settle(outcome, { code, message })
  }

  private head(): Omit<ResponseHead, 'bytes'> {
    return {
      status: this.status ?? 200,
      headers: this.site.upgrade,
      ttfb_ms: this.ttfb === null ? null : round(this.ttfb),
      total_ms: round(performance.now() - this.t0),
      ended_at: new Date().toISOString(),
    }
  }

  private teeing(what: () => void): void {
    try {
      what()
    } catch (err) {
      // The event still reaches the client; only its copy in the journal is lost.
      this.ctx.log.error(
        { ws: this.prepared.step.workspace, agent: this.prepared.step.agent.name, err: String(err) },
        'the journal copy of an answer failed',
      )
      this.tee = undefined
    }
  }

  private settle(outcome: Forwarded['outcome'], error: Forwarded['error']): void {
    if (this.finished) return
    this.finished = true
    const f: Forwarded = {
      outcome,
      status: this.status,
      headers: this.site.upgrade,
      body: this.whole ? Buffer.alloc(0) : Buffer.concat(this.chunks),
      ttfbMs: this.ttfb,
      totalMs: performance.now() - this.t0,
      error,
      streamed: this.whole,
    }
    const { step, plugins } = this.prepared
    void finish(this.ctx, step, f)
      .then(
        (done) => {
          logFrame(this.ctx, this.site, step.meta, done)
          return plugins?.settled({ ...done, step: step.meta.step })
        },
        (err: unknown) =>
          this.ctx.log.error(
            { ws: step.workspace, agent: step.agent.name, step: step.meta.step, err: String(err) },
            'finishing a step failed',
          ),
      )
      .finally(() => this.done())
  }
}

function parseObject(data: Buffer): Record<string, Json> | undefined {
  try {
    const v = JSON.parse(data.toString('utf8')) as Json
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? v : undefined
  } catch {
    return undefined
  }
}

/** The one line a frame's step leaves in the log, as an HTTP step's. */
function logFrame(
  ctx: ServerContext,
  site: SocketSite,
  sent: Prepared['step']['meta'],
  done: Awaited<ReturnType<typeof finish>>,
): void {
  if (!ctx.log.isLevelEnabled('info')) return
  const u = done.usage
  ctx.log.info(
    {
      ws: sent.workspace,
      agent: sent.agent,
      step: sent.step,
      socket: site.n,
      status: done.status,
      outcome: done.outcome,
      ttfb_ms: done.ttfb_ms,
      cache_read: u?.cache_read_tokens ?? null,
      hold: sent.hold.reason,
    },
    `${sent.workspace}/${sent.agent} ${sent.step} (socket ${site.n}) ${done.status ?? done.outcome ?? '-'} ttfb ${done.ttfb_ms ?? '-'} ms, cache read ${u?.cache_read_tokens ?? '-'} write ${u?.cache_write_tokens ?? '-'}, hold: ${sent.hold.reason}`,
  )
}
