/**
 * proxy/admin/body: `readJsonBody` on real requests to a loopback server. Rules: a JSON object is
 * read whole, however it is chunked (a character split across chunks included); a body over the
 * limit is BODY_TOO_LARGE naming the limit, one at the limit is read; a body that is not JSON, or
 * is JSON but not an object, is BAD_JSON; the silence and pace limits are body.ts's (test/proxy/http/body.test.ts).
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { readJsonBody } from '../../../proxy/admin/body'
import { HoldfastError } from '../../../proxy/core/errors'

let server: http.Server
let port: number
let limit: number | undefined

beforeAll(async () => {
  server = http.createServer((req, res) => {
    readJsonBody(req, limit).then(
      (body) => res.end(JSON.stringify({ body })),
      (err: unknown) => {
        const e = err as HoldfastError
        res.end(
          JSON.stringify({
            error: { code: e instanceof HoldfastError ? e.code : 'NOT_HOLDFAST', message: e.message },
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
beforeEach(() => (limit = undefined))

interface Out {
  body?: unknown
  error?: { code: string; message: string }
}

/** POST the chunks, one write each with a pause between, and read what the server made of them. */
function post(chunks: (string | Buffer)[]): Promise<Out> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/' }, (res) => {
      let text = ''
      res.on('data', (d: Buffer) => (text += d.toString()))
      res.on('end', () => resolve(JSON.parse(text) as Out))
    })
    req.on('error', reject)
    const write = (i: number): void => {
      if (i === chunks.length) {
        req.end()
        return
      }
      req.write(chunks[i])
      setTimeout(() => write(i + 1), 5)
    }
    write(0)
  })
}

describe('readJsonBody', () => {
  it('reads a JSON object sent in pieces, with a character split between two of them', async () => {
    const bytes = Buffer.from(JSON.stringify({ name: 'café ☕', n: [1, 2] }))
    const at = bytes.indexOf(Buffer.from('☕')) + 1 // inside the three bytes of ☕
    expect(await post([bytes.subarray(0, 5), bytes.subarray(5, at), bytes.subarray(at)])).toEqual({
      body: { name: 'café ☕', n: [1, 2] },
    })
  })

  it('refuses a body over the limit as BODY_TOO_LARGE naming the limit, and reads one exactly at it', async () => {
    limit = 20
    const at = JSON.stringify({ k: 'x'.repeat(12) }) // 20 bytes
    expect(Buffer.byteLength(at)).toBe(20)
    expect(await post([at])).toEqual({ body: { k: 'x'.repeat(12) } })
    expect(await post([at.slice(0, 10), `${at.slice(10)} `])).toEqual({
      error: { code: 'BODY_TOO_LARGE', message: 'an admin request body is limited to 20 bytes' },
    })
  })

  it('defaults to a limit of 1 MiB', async () => {
    const fits = JSON.stringify({ k: 'x'.repeat(1024 * 1024 - 8) })
    expect(Buffer.byteLength(fits)).toBe(1024 * 1024)
    expect((await post([fits])).body).toBeDefined()
    expect((await post([`${fits} `])).error?.code).toBe('BODY_TOO_LARGE')
  })

  it('refuses a body that is not JSON as BAD_JSON, with the parser’s reason', async () => {
    for (const text of ['{nope', '']) {
      const out = await post([text])
      expect(out.error?.code).toBe('BAD_JSON')
      expect(out.error?.message).toMatch(/^the request body is not valid JSON: \S/)
    }
  })

  it('refuses JSON that is not an object as BAD_JSON', async () => {
    for (const text of ['[]', 'null', '3', '"text"', '[{"a":1}]']) {
      expect(await post([text])).toEqual({
        error: { code: 'BAD_JSON', message: 'the request body must be a JSON object' },
      })
    }
  })
})
