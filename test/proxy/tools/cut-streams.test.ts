/**
 * proxy/tools/cut-streams: the `fetch` given to the streamable HTTP transport, against a real
 * loopback server. Rules: the bytes, status and headers of an answer pass through unchanged; a POST
 * answer stream (SSE) cut short calls `onCut` once and errors the reader; a stream that ends
 * normally, one the reader cancels, a GET stream and a non-SSE answer never call it.
 */
import http from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { fetchNoticingCuts } from '../../../proxy/tools/cut-streams'

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void

let server: http.Server
let url: string
let handler: Handler = (_req, res) => res.end()
const sockets = new Set<Socket>()
/** Resolves when the server sees the current request's connection close. */
let closed: Promise<void> = Promise.resolve()

beforeAll(async () => {
  server = http.createServer((req, res) => {
    closed = new Promise((r) => res.once('close', () => r()))
    handler(req, res)
  })
  server.on('connection', (s: Socket) => {
    sockets.add(s)
    s.once('close', () => sockets.delete(s))
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`
})
afterAll(async () => {
  for (const s of sockets) s.destroy()
  await new Promise<void>((r) => server.close(() => r()))
})

/** An SSE answer that writes `events`, then ends, or cuts the socket when `cut`. */
function sse(events: string[], cut: boolean, status = 200): Handler {
  return (_req, res) => {
    res.writeHead(status, { 'content-type': 'text/event-stream', 'x-extra': 'kept' })
    for (const e of events) res.write(e)
    setTimeout(() => (cut ? res.socket?.destroy() : res.end()), 30)
  }
}

async function readAll(res: Response): Promise<{ text: string; error?: unknown }> {
  const reader = (res.body as ReadableStream<Uint8Array>).getReader()
  const chunks: Uint8Array[] = []
  try {
    for (;;) {
      const r = await reader.read()
      if (r.done) break
      chunks.push(r.value)
    }
    return { text: Buffer.concat(chunks).toString('utf8') }
  } catch (error) {
    return { text: Buffer.concat(chunks).toString('utf8'), error }
  }
}

const EVENTS = ['event: message\ndata: {"a":1}\n\n', 'data: {"é":"ü"}\n\n']

describe('fetchNoticingCuts', () => {
  it('passes a POST answer stream through byte for byte, with its status and headers, and no cut', async () => {
    handler = sse(EVENTS, false, 202)
    const cuts: unknown[] = []
    const res = await fetchNoticingCuts((e) => cuts.push(e))(url, { method: 'POST', body: '{}' })
    expect([res.status, res.headers.get('x-extra')]).toEqual([202, 'kept'])
    expect(await readAll(res)).toEqual({ text: EVENTS.join('') })
    expect(cuts).toEqual([])
  })

  it('calls onCut exactly once for a POST answer stream cut short, and errors the reader', async () => {
    handler = sse(EVENTS.slice(0, 1), true)
    const cuts: unknown[] = []
    const res = await fetchNoticingCuts((e) => cuts.push(e))(url, { method: 'POST', body: '{}' })
    const out = await readAll(res)
    expect(out.text).toBe(EVENTS[0])
    expect(out.error).toBeDefined()
    expect(cuts).toHaveLength(1)
    expect(cuts[0]).toBe(out.error) // the reader sees the same failure onCut heard of
  })

  it('does not call onCut for a GET event stream cut short (the SDK resumes those itself)', async () => {
    handler = sse(EVENTS.slice(0, 1), true)
    const cuts: unknown[] = []
    const res = await fetchNoticingCuts((e) => cuts.push(e))(url)
    const out = await readAll(res)
    expect(out.error).toBeDefined()
    expect(cuts).toEqual([])
  })

  it('does not call onCut for a POST answer that is not an event stream, even when cut', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' })
      res.write('{"partial":')
      setTimeout(() => res.socket?.destroy(), 30)
    }
    const cuts: unknown[] = []
    const res = await fetchNoticingCuts((e) => cuts.push(e))(url, { method: 'POST', body: '{}' })
    const out = await readAll(res)
    expect(out.error).toBeDefined()
    expect(cuts).toEqual([])
  })

  it('does not call onCut when the reader cancels the stream, and the cancel reaches the server', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.write(EVENTS[0])
      // never ends: only the client's cancel closes it
    }
    const cuts: unknown[] = []
    const res = await fetchNoticingCuts((e) => cuts.push(e))(url, { method: 'POST', body: '{}' })
    const reader = (res.body as ReadableStream<Uint8Array>).getReader()
    expect(Buffer.from((await reader.read()).value as Uint8Array).toString()).toBe(EVENTS[0])
    await reader.cancel('done with it')
    // The timer is cleared when the close wins: left pending, it kept jest's worker alive (regression).
    let timer: NodeJS.Timeout | undefined
    const seen = await Promise.race([
      closed.then(() => 'closed'),
      new Promise((r) => (timer = setTimeout(() => r('still open'), 2000))),
    ])
    clearTimeout(timer)
    expect(seen).toBe('closed')
    await new Promise((r) => setTimeout(r, 50))
    expect(cuts).toEqual([])
  })
})
