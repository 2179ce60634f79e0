/**
 * A Responses WebSocket client for tests, as Codex drives one: open a socket (to holdfast or to the
 * fake directly), send a frame, read the events of its answer until the terminal one (or an
 * in-band error), every message kept as the exact bytes received. Invariant: every wait is bounded.
 */
import WebSocket from 'ws'

export interface Opened {
  ws: WebSocket
  /** The headers of the 101. */
  headers: Record<string, string | string[] | undefined>
  /** Every message received, in order, as its bytes. */
  received: { data: Buffer; binary: boolean }[]
  /** Resolves with the close code and reason once the socket closed. */
  closed: Promise<{ code: number; reason: string }>
}

/** `http://…` → `ws://…`, path appended. */
export const wsUrl = (base: string, path: string): string => `${base.replace(/^http/, 'ws')}${path}`

/** Open a socket; rejects with the refusal's status when the upgrade is answered otherwise. */
export function openSocket(
  url: string,
  headers: Record<string, string> = {},
  opts: { deflate?: boolean } = {},
): Promise<Opened> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers, perMessageDeflate: opts.deflate ?? false, maxPayload: 0 })
    const received: Opened['received'] = []
    let upgrade: Opened['headers'] = {}
    const closed = new Promise<{ code: number; reason: string }>((r) =>
      ws.once('close', (code, reason) => r({ code, reason: reason.toString() })),
    )
    ws.on('message', (data: Buffer, binary: boolean) => received.push({ data, binary }))
    ws.once('upgrade', (res) => (upgrade = res.headers))
    ws.once('open', () => resolve({ ws, headers: upgrade, received, closed }))
    ws.once('unexpected-response', (_req, res) => {
      let body = ''
      res.on('data', (d: Buffer) => (body += d.toString()))
      res.on('end', () =>
        reject(
          Object.assign(new Error(`upgrade refused ${res.statusCode}: ${body}`), {
            status: res.statusCode,
            body,
            headers: res.headers,
          }),
        ),
      )
    })
    ws.once('error', reject)
  })
}

const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed', 'error'])

/** The type of a received text message, if it is a JSON object naming one. */
export function typeOf(data: Buffer): string | undefined {
  try {
    const v = JSON.parse(data.toString()) as { type?: unknown }
    return typeof v.type === 'string' ? v.type : undefined
  } catch {
    return undefined
  }
}

/** Send `frame` and resolve with the messages of its answer, the terminal one last. */
export function turn(s: Opened, frame: object | Buffer, ms = 10_000): Promise<Buffer[]> {
  const from = s.received.length
  // A text frame whatever it is given as (Codex sends JSON text).
  s.ws.send(Buffer.isBuffer(frame) ? frame : JSON.stringify(frame), { binary: false })
  return answer(s, from, ms)
}

/** The messages from index `from` up to and including the next terminal one. */
export function answer(s: Opened, from: number, ms = 10_000): Promise<Buffer[]> {
  const until = Date.now() + ms
  return new Promise((resolve, reject) => {
    const check = (): void => {
      const got = s.received.slice(from)
      const end = got.findIndex((m) => !m.binary && TERMINAL.has(typeOf(m.data) ?? ''))
      if (end >= 0) return resolve(got.slice(0, end + 1).map((m) => m.data))
      if (Date.now() > until) return reject(new Error(`no terminal event within ${ms} ms; got ${got.length}`))
      setTimeout(check, 5)
    }
    check()
  })
}

/** The response id a terminal event carries. */
export function responseId(events: Buffer[]): string {
  const last = JSON.parse((events[events.length - 1] as Buffer).toString()) as { response?: { id?: string } }
  return last.response?.id ?? ''
}

/** A Codex-shaped message item. */
export const message = (role: string, text: string): object => ({
  type: 'message',
  role,
  content: [{ type: role === 'assistant' ? 'output_text' : 'input_text', text }],
})

/** A function tool. */
export const tool = (name: string): object => ({
  type: 'function',
  name,
  description: `the ${name} tool`,
  parameters: { type: 'object', properties: {} },
})
