/**
 * A fake Responses WebSocket provider (`GET /v1/responses` upgraded, the beta Codex speaks) for
 * tests and the benchmark, with HTTP `POST /v1/responses` beside it (the same answers as an event
 * stream). It keeps what the real one keeps per socket: the responses answered on it, so a
 * `response.create` naming one of them as `previous_response_id` continues its conversation with
 * only the new items, and one naming any other is answered in band `previous_response_not_found`;
 * and its prompt cache, warm for the socket (a fresh socket reads nothing from it). Each answer is
 * `response.created` → the output's events → `response.completed` with usage and `cached_tokens`;
 * a `generate: false` frame (a pre-warm) is answered with an empty output.
 * Invariant: every upgrade and frame is pushed to `upgrades`/`frames` (exact bytes) before any
 * answer to it; loopback only; `close()` ends every socket.
 */
import * as http from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { WebSocketServer, type WebSocket } from 'ws'
import { inputItems, outputItems, responseEvents, responseObject, responsesRendering } from './fake-responses'
import { isObject, tokensOf, type Json, type JsonObject, type ScriptedToolCall } from './fake-wire'

export interface WsScript {
  text?: string
  toolCalls?: ScriptedToolCall[]
  reasoning?: string
  /** Transport events the real one sends beside an answer (`codex.rate_limits`, timings, metadata). */
  transport?: boolean
  /** Answer with this in-band error instead (the provider's shape). */
  error?: { status: number; code: string; message: string }
  /** Wait this long before each event. */
  eventDelayMs?: number
  /** After this many events of the answer, close the socket (the provider going away mid-answer). */
  closeAfter?: { events: number; code?: number; reason?: string }
  /** A binary message among the events (after `response.created`). */
  binaryEvent?: boolean
}

export interface FakeFrame {
  socket: number
  data: Buffer
  binary: boolean
}

export interface FakeUpgrade {
  socket: number
  url: string
  headers: http.IncomingHttpHeaders
}

export interface FakeResponsesWsOptions {
  /** Answer every upgrade with this HTTP status instead of 101 (a provider without WebSockets). */
  refuseUpgrade?: number
  /** Headers of the 101 (default: the ones Codex reads, with fake values). */
  upgradeHeaders?: Record<string, string>
  /** Scripts a frame no queued script takes (a scripted model); undefined: the default answer. */
  answer?: (frame: JsonObject) => WsScript | undefined
}

export interface FakeResponsesWs {
  readonly url: string
  /** `url + '/v1'`, a provider row's base URL. */
  readonly openaiBaseUrl: string
  readonly upgrades: FakeUpgrade[]
  readonly frames: FakeFrame[]
  /** Every message the fake sent, per socket, exact bytes. */
  readonly sent: FakeFrame[]
  /** Bodies of HTTP `POST /v1/responses`. */
  readonly posts: Buffer[]
  /** Close codes and reasons the fake's sockets ended with, by socket. */
  readonly closes: Map<number, { code: number; reason: string }>
  enqueue(script: WsScript): void
  /** Close every open socket from the provider's side. */
  closeSockets(code?: number, reason?: string): void
  reset(): void
  close(): Promise<void>
}

export const DEFAULT_WS_TEXT = 'Hello from the fake socket.'
export const UPGRADE_HEADERS = {
  'x-codex-turn-state': 'fake-turn-state-1',
  'x-models-etag': 'fake-etag-1',
  'x-reasoning-included': 'true',
  'openai-model': 'gpt-fake-1',
}

/** Bytes shared at the start of two renderings. */
function commonPrefix(a: Buffer, b: Buffer): number {
  const n = Math.min(a.length, b.length)
  let i = 0
  while (i < n && a[i] === b[i]) i++
  return i
}

/** The JSON payloads of an event stream's `data:` lines, as the text each event is sent as. */
const dataOf = (events: string[]): string[] =>
  events.map((e) => /\ndata: (.*)\n\n$/s.exec(e)?.[1] ?? '').filter((d) => d !== '')

const wait = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

const notFound = (id: string): string =>
  JSON.stringify({
    type: 'error',
    status: 400,
    error: {
      type: 'invalid_request_error',
      code: 'previous_response_not_found',
      message: `Previous response with id '${id}' not found.`,
      param: 'previous_response_id',
    },
  })

/** One socket's state: the conversations it answered, and its warm cache. */
interface SocketState {
  n: number
  ws: WebSocket
  stored: Map<string, Json[]>
  rendering: Buffer<ArrayBufferLike>
}

export async function startFakeResponsesWs(opts: FakeResponsesWsOptions = {}): Promise<FakeResponsesWs> {
  const upgrades: FakeUpgrade[] = []
  const frames: FakeFrame[] = []
  const sent: FakeFrame[] = []
  const posts: Buffer[] = []
  const closes = new Map<number, { code: number; reason: string }>()
  const queue: WsScript[] = []
  const open = new Set<SocketState>()
  const sockets = new Set<Socket>()
  let seq = 0
  let numbered = 0
  let httpRendering: Buffer = Buffer.alloc(0)

  /** The events of an answer to `request` whose context is `context`, its cache read from `warm`. */
  function answerOf(
    request: JsonObject,
    context: Json[],
    warm: Buffer,
    script: WsScript,
  ): {
    data: string[]
    id: string
    stored: Json[]
    rendering: Buffer
  } {
    const n = ++seq
    const model = typeof request.model === 'string' ? request.model : 'gpt-fake-1'
    const rendering = Buffer.from(responsesRendering(request, context))
    const inputTokens = tokensOf(rendering)
    const prewarm = request.generate === false
    const toolCalls = prewarm ? [] : (script.toolCalls ?? [])
    const answer = {
      request,
      model,
      seq: n,
      text: prewarm ? undefined : (script.text ?? (toolCalls.length > 0 ? undefined : DEFAULT_WS_TEXT)),
      reasoning: prewarm ? undefined : script.reasoning,
      toolCalls,
      inputTokens,
      cachedTokens: Math.min(inputTokens, Math.floor(commonPrefix(warm, rendering) / 4)),
    }
    const output = outputItems(answer)
    const response = responseObject(answer, output)
    let data = dataOf(responseEvents(response))
    if (script.transport) {
      const rate = JSON.stringify({
        type: 'codex.rate_limits',
        plan_type: 'pro',
        rate_limits: { primary: { used_percent: 1, window_minutes: 300 } },
      })
      const tail = [
        JSON.stringify({ type: 'codex.response.metadata', response_id: response.id, region: 'fake' }),
        JSON.stringify({ type: 'response.metadata', response_id: response.id, metadata: {} }),
        JSON.stringify({ type: 'responsesapi.websocket_timing', server_ms: 1 }),
      ]
      data = [rate, ...data.slice(0, -1), ...tail, ...data.slice(-1)]
    }
    return { data, id: response.id as string, stored: [...context, ...inputItems(output)], rendering }
  }

  async function onFrame(s: SocketState, raw: Buffer, binary: boolean): Promise<void> {
    frames.push({ socket: s.n, data: raw, binary })
    if (binary) return
    let frame: unknown
    try {
      frame = JSON.parse(raw.toString('utf8'))
    } catch {
      return
    }
    if (!isObject(frame) || frame.type !== 'response.create') return
    const send = (d: string | Buffer, b = false): void => {
      if (s.ws.readyState !== s.ws.OPEN) return
      const bytes = Buffer.isBuffer(d) ? d : Buffer.from(d)
      sent.push({ socket: s.n, data: bytes, binary: b })
      s.ws.send(bytes, { binary: b })
    }
    const prev = frame.previous_response_id
    const before = typeof prev === 'string' ? s.stored.get(prev) : []
    if (before === undefined) return send(notFound(String(prev)))
    const script = (frame.generate === false ? undefined : queue.shift()) ?? opts.answer?.(frame) ?? {}
    if (script.error)
      return send(
        JSON.stringify({
          type: 'error',
          status: script.error.status,
          error: { type: 'invalid_request_error', ...script.error, param: null },
        }),
      )
    const { data, id, stored, rendering } = answerOf(
      frame,
      [...before, ...inputItems(frame.input)],
      s.rendering,
      script,
    )
    s.rendering = rendering
    s.stored.set(id, stored)
    for (const [i, d] of data.entries()) {
      if (script.closeAfter && i === script.closeAfter.events) {
        s.ws.close(script.closeAfter.code ?? 1011, script.closeAfter.reason ?? 'fake provider went away')
        return
      }
      if (script.eventDelayMs) await wait(script.eventDelayMs)
      send(d)
      if (script.binaryEvent && i === 0) send(Buffer.from([0, 1, 2, 3]), true)
    }
  }

  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: true, maxPayload: 256 * 1024 * 1024 })
  wss.on('headers', (headers: string[]) => {
    for (const [k, v] of Object.entries(opts.upgradeHeaders ?? UPGRADE_HEADERS)) headers.push(`${k}: ${v}`)
  })
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      if (req.method !== 'POST' || req.url?.split('?')[0] !== '/v1/responses') {
        res.writeHead(404, { 'content-type': 'application/json' })
        res.end('{"error":{"message":"not found","type":"invalid_request_error"}}')
        return
      }
      const body = Buffer.concat(chunks)
      posts.push(body)
      const request = JSON.parse(body.toString('utf8')) as JsonObject
      const script = queue.shift() ?? opts.answer?.(request) ?? {}
      const { data, rendering } = answerOf(request, inputItems(request.input), httpRendering, script)
      httpRendering = rendering
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      for (const d of data) res.write(`event: ${String((JSON.parse(d) as JsonObject).type)}\ndata: ${d}\n\n`)
      res.end()
    })
  })
  server.on('connection', (sock: Socket) => {
    sockets.add(sock)
    sock.on('close', () => sockets.delete(sock))
  })
  server.on('upgrade', (req: http.IncomingMessage, socket: Socket, head: Buffer) => {
    const n = ++numbered
    upgrades.push({ socket: n, url: req.url ?? '', headers: req.headers })
    if (opts.refuseUpgrade !== undefined || req.url?.split('?')[0] !== '/v1/responses') {
      const status = opts.refuseUpgrade ?? 404
      socket.end(
        `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? ''}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n`,
      )
      return
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      const s: SocketState = { n, ws, stored: new Map(), rendering: Buffer.alloc(0) }
      open.add(s)
      let chain = Promise.resolve()
      ws.on('message', (data: Buffer, binary: boolean) => {
        chain = chain.then(() => onFrame(s, data, binary)).catch(() => undefined)
      })
      ws.on('close', (code: number, reason: Buffer) => {
        open.delete(s)
        closes.set(n, { code, reason: reason.toString() })
      })
      ws.on('error', () => ws.terminate())
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    url,
    openaiBaseUrl: `${url}/v1`,
    upgrades,
    frames,
    sent,
    posts,
    closes,
    enqueue: (script) => void queue.push(script),
    closeSockets(code = 1001, reason = 'fake provider closing') {
      for (const s of open) s.ws.close(code, reason)
    },
    reset() {
      upgrades.length = 0
      frames.length = 0
      sent.length = 0
      posts.length = 0
      queue.length = 0
      closes.clear()
      httpRendering = Buffer.alloc(0)
    },
    async close() {
      for (const s of open) s.ws.terminate()
      for (const sock of sockets) sock.destroy()
      wss.close()
      await new Promise<void>((r) => server.close(() => r()))
    },
  }
}
