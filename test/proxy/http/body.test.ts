/**
 * proxy/http/body: `readBody` on real requests to a loopback server. Rules: a body is read whole
 * however it is chunked; over the size limit it is BODY_TOO_LARGE (at once when content-length
 * says so); silence for `idleMs` is REQUEST_TIMEOUT; a trickle that never falls silent but runs
 * slower than `minRate` (after the first `idleMs`) is BODY_TOO_SLOW, while a large body at a
 * usable pace is read; `minRate: 0` keeps only the idle limit; an aborted signal ends it with
 * SHUTTING_DOWN.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import net from 'node:net'
import { type BodyLimits, readBody } from '../../../proxy/http/body'
import { HoldfastError } from '../../../proxy/core/errors'

let server: http.Server
let port: number
let limits: BodyLimits
let stop: AbortController

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const t0 = Date.now()
    readBody(req, limits, stop.signal).then(
      (body) => res.end(JSON.stringify({ bytes: body.length, ms: Date.now() - t0 })),
      (err: unknown) => {
        const e = err as HoldfastError
        res.setHeader('connection', 'close')
        res.end(
          JSON.stringify({
            code: e instanceof HoldfastError ? e.code : String(e),
            ms: Date.now() - t0,
            message: e.message,
          }),
        )
      },
    )
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  port = (server.address() as AddressInfo).port
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise<void>((r) => server.close(() => r()))
})
beforeEach(() => {
  limits = { bytes: 1024 * 1024, idleMs: 30_000, minRate: 1024 }
  stop = new AbortController()
})

interface Out {
  bytes?: number
  code?: string
  ms: number
  message?: string
}

/** Send `pieces` of a body of declared `length`, `gapMs` apart, on a raw socket; the answer's JSON. */
function send(
  pieces: Buffer[],
  gapMs: number,
  length = pieces.reduce((n, p) => n + p.length, 0),
): Promise<Out> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    let answer = ''
    let timer: NodeJS.Timeout | undefined
    socket.on('data', (d: Buffer) => (answer += d.toString()))
    // Once answered, a write racing the server's close may fail (EPIPE, ECONNRESET): the answer stands.
    socket.on('error', (err) => {
      if (answer === '') reject(err)
    })
    socket.on('close', () => {
      clearTimeout(timer)
      const at = answer.indexOf('\r\n\r\n')
      if (at < 0) reject(new Error(`no answer: ${JSON.stringify(answer)}`))
      else resolve(JSON.parse(answer.slice(at + 4)) as Out)
    })
    socket.write(
      `POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nconnection: close\r\ncontent-length: ${length}\r\n\r\n`,
    )
    let i = 0
    const next = (): void => {
      if (i >= pieces.length || socket.destroyed || answer !== '') return
      socket.write(pieces[i++] as Buffer)
      timer = setTimeout(next, gapMs)
    }
    next()
  })
}

const bytes = (n: number, size = 1): Buffer[] => Array.from({ length: n }, () => Buffer.alloc(size, 'x'))

describe('readBody', () => {
  it('reads a body whole, however it is chunked', async () => {
    expect(await send(bytes(5, 1000), 5)).toMatchObject({ bytes: 5000 })
  })

  it('refuses a body over the limit as BODY_TOO_LARGE, at once when its content-length says so', async () => {
    limits.bytes = 100
    expect(await send(bytes(2, 60), 5)).toMatchObject({ code: 'BODY_TOO_LARGE' })
    expect(await send([], 5, 101)).toMatchObject({
      code: 'BODY_TOO_LARGE',
      message: 'the request body (101 bytes) is over the 100-byte limit',
    })
  })

  it('answers silence for idleMs with REQUEST_TIMEOUT, saying how much arrived', async () => {
    // The idle rule alone: with a pace too, a body that stops this early is also behind it, and
    // whichever deadline comes first answers (both 408).
    limits = { bytes: 1024, idleMs: 300, minRate: 0 }
    const out = await send([Buffer.from('{"a":')], 5, 50)
    expect(out).toMatchObject({
      code: 'REQUEST_TIMEOUT',
      message: 'the request body sent nothing for 300 ms (5 bytes received of 50)',
    })
    expect(out.ms).toBeGreaterThanOrEqual(290)
  })

  it('cuts a trickle that is never silent for idleMs but runs slower than minRate', async () => {
    // One byte every 100 ms (10 bytes/s) against 20 bytes/s: the body may take 2 s + 50 ms per
    // byte, and is never idle; it falls behind after about forty bytes, four seconds in.
    limits = { bytes: 1024, idleMs: 2000, minRate: 20 }
    const out = await send(bytes(200), 100, 200)
    expect(out).toMatchObject({
      code: 'BODY_TOO_SLOW',
      message: expect.stringMatching(
        /^the request body arrived slower than 20 bytes\/s \(\d+ bytes received of 200 in \d+ ms\)$/,
      ),
    })
    expect(out.ms).toBeGreaterThanOrEqual(2000)
    expect(out.ms).toBeLessThan(15_000)
  })

  it('reads a large body sent in many pieces at a usable pace', async () => {
    limits = { bytes: 1024 * 1024, idleMs: 5000, minRate: 1024 }
    expect(await send(bytes(40, 16 * 1024), 20)).toMatchObject({ bytes: 40 * 16 * 1024 })
  })

  it('keeps only the idle limit with minRate 0', async () => {
    limits = { bytes: 1024, idleMs: 1000, minRate: 0 }
    expect(await send(bytes(12), 150)).toMatchObject({ bytes: 12 })
  })

  it('ends with SHUTTING_DOWN when its signal is aborted', async () => {
    const out = send([Buffer.from('{')], 5, 10)
    setTimeout(() => stop.abort(), 100)
    expect(await out).toMatchObject({ code: 'SHUTTING_DOWN' })
  })
})
