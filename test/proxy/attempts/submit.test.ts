/**
 * proxy/attempts/submit: an attempt's first step sent as a client would, against a real loopback
 * server standing in for the proxy. The request goes to `/w/<ws>/a/<child><endpoint>` with the
 * prepared headers, the body's length and the token; progress is waiting, streaming (first byte),
 * then done or failed; `firstByte` settles at the first byte (or the end, or the failure); a failure
 * carries the error envelope's message, a body's first line, or the socket error.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import type { Prepared } from '../../../proxy/attempts/dispatch'
import { type Progress, submitFirstStep } from '../../../proxy/attempts/submit'
import { dialectByName } from '../../../proxy/dialects'
import { Workspace } from '../../../proxy/store/workspace'

interface Seen {
  url: string
  headers: http.IncomingHttpHeaders
  body: Buffer
}

let server: http.Server
let url: string
let handle: (req: http.IncomingMessage, res: http.ServerResponse, seen: Seen) => void
const seen: Seen[] = []

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const s = { url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) }
      seen.push(s)
      handle(req, res, s)
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise((r) => server.close(r))
})
beforeEach(() => {
  seen.length = 0
})

function prepared(ws = 'att', child = 'main-20260101T000000Z-ab12'): Prepared {
  const body = Buffer.from(
    JSON.stringify({ model: 'm', max_tokens: 8, messages: [{ role: 'user', content: 'é' }] }),
  )
  return {
    ws: new Workspace(os.tmpdir(), ws),
    child,
    dialect: dialectByName('anthropic'),
    headers: { 'x-holdfast-role': 'reviewer', 'content-type': 'application/json' },
    body,
  } as unknown as Prepared
}

function recorder(): { events: [string, Progress][]; on: (child: string, p: Progress) => void } {
  const events: [string, Progress][] = []
  return { events, on: (child, p) => void events.push([child, p]) }
}

describe('submitFirstStep', () => {
  it("posts the body to the child's address with the prepared headers and the token, and reports waiting, streaming, done", async () => {
    let release!: () => void
    const held = new Promise<void>((r) => (release = r))
    handle = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.write('event: message_start\n\n')
      void held.then(() => res.end('event: message_stop\n\n'))
    }
    const p = prepared()
    const rec = recorder()
    const s = submitFirstStep(p, url, 'tok-123', rec.on)
    let ended = false
    void s.done.then(() => (ended = true))
    await s.firstByte
    // The first byte is in while the answer still streams.
    expect(ended).toBe(false)
    expect(rec.events.map(([, e]) => e.state)).toEqual(['waiting', 'streaming'])
    release()
    const final = await s.done
    expect(final).toMatchObject({ state: 'done', status: 200 })
    expect(rec.events.map(([, e]) => e.state)).toEqual(['waiting', 'streaming', 'done'])
    expect(rec.events.every(([child]) => child === p.child)).toBe(true)
    const streaming = rec.events[1]![1] as { ttfbMs: number }
    expect(streaming.ttfbMs).toBeGreaterThanOrEqual(0)
    expect((final as { ms: number }).ms).toBeGreaterThanOrEqual(streaming.ttfbMs)
    const req = seen[0]!
    expect(req.url).toBe(`/w/att/a/${p.child}/v1/messages`)
    expect(req.body.equals(p.body)).toBe(true)
    expect(req.headers).toMatchObject({
      'x-holdfast-role': 'reviewer',
      'content-type': 'application/json',
      'content-length': String(p.body.length),
      'x-holdfast-token': 'tok-123',
    })
  })

  it('sends no token header without a token, to the workspace and child it was prepared for', async () => {
    handle = (_req, res) => res.end('{}')
    const s = submitFirstStep(prepared('other.ws', 'boss-20260101T000000Z-ff00'), url, undefined)
    expect(await s.done).toMatchObject({ state: 'done', status: 200 })
    expect(seen[0]!.url).toBe('/w/other.ws/a/boss-20260101T000000Z-ff00/v1/messages')
    expect(seen[0]!.headers).not.toHaveProperty('x-holdfast-token')
  })

  it("fails an error status with the envelope's message, or the body's first line cut to 200 characters", async () => {
    handle = (_req, res) => {
      res.writeHead(429, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } }))
    }
    const rec = recorder()
    expect(await submitFirstStep(prepared(), url, undefined, rec.on).done).toMatchObject({
      state: 'failed',
      status: 429,
      message: 'slow down',
    })
    expect(rec.events.map(([, e]) => e.state)).toEqual(['waiting', 'streaming', 'failed'])
    handle = (_req, res) => {
      res.writeHead(502)
      res.end(`${'x'.repeat(300)}\nsecond line`)
    }
    const plain = await submitFirstStep(prepared(), url, undefined).done
    expect(plain).toMatchObject({ state: 'failed', status: 502, message: 'x'.repeat(200) })
  })

  it('reports done without a streaming event for an answer with no body, and still settles firstByte', async () => {
    handle = (_req, res) => {
      res.writeHead(204)
      res.end()
    }
    const rec = recorder()
    const s = submitFirstStep(prepared(), url, undefined, rec.on)
    await s.firstByte
    expect(await s.done).toMatchObject({ state: 'done', status: 204 })
    expect(rec.events.map(([, e]) => e.state)).toEqual(['waiting', 'done'])
  })

  it('fails with no status and the socket error when nothing listens, settling firstByte', async () => {
    const closed = http.createServer()
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r))
    const port = (closed.address() as AddressInfo).port
    await new Promise((r) => closed.close(r))
    const rec = recorder()
    const s = submitFirstStep(prepared(), `http://127.0.0.1:${port}`, undefined, rec.on)
    await s.firstByte
    const final = await s.done
    expect(final).toMatchObject({
      state: 'failed',
      status: null,
      message: expect.stringMatching(/ECONNREFUSED/),
    })
    expect(rec.events.map(([, e]) => e.state)).toEqual(['waiting', 'failed'])
  })

  it('fails an answer cut off mid-stream, reporting the failure once', async () => {
    handle = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.write('event: message_start\n\n', () => setTimeout(() => res.socket?.destroy(), 20))
    }
    const rec = recorder()
    const final = await submitFirstStep(prepared(), url, undefined, rec.on).done
    expect(final).toMatchObject({ state: 'failed', status: 200 })
    await new Promise((r) => setTimeout(r, 50))
    expect(rec.events.map(([, e]) => e.state)).toEqual(['waiting', 'streaming', 'failed'])
  })
})
