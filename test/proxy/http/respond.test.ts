/**
 * proxy/http/respond.ts, the answers holdfast produces itself: a HoldfastError in the dialect's own
 * envelope (or holdfast's admin envelope) with the status from the error table and the code in
 * `x-holdfast-error`; any other thrown value as INTERNAL; the home's absolute path (as given and
 * as resolved through symlinks) shown as `<home>`; an error after the headers went out cuts the
 * connection instead of writing a second head; JSON answers with their length.
 */
import fs from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { ERROR_CODES, type ErrorCode, HoldfastError } from '../../../proxy/core/errors'
import { anthropic, openai } from '../../../proxy/dialects'
import {
  asHoldfastError,
  hideHomeInErrors,
  sendError,
  sendJson,
  toWireError,
} from '../../../proxy/http/respond'

let server: http.Server
let base: string
let handler: (res: http.ServerResponse) => void = () => undefined
beforeAll(async () => {
  server = http.createServer((_req, res) => handler(res))
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise<void>((r) => server.close(() => r()))
})

let tmp: string
beforeEach(() => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-respond-')))
})
afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }))

const wire = (err: HoldfastError, d = anthropic) => {
  const { status, body } = toWireError(err, d)
  return { status, body: JSON.parse(body.toString()) as unknown }
}

describe('toWireError', () => {
  it('answers every code with the status of the error table, in the anthropic envelope with its type', () => {
    for (const code of Object.keys(ERROR_CODES) as ErrorCode[]) {
      expect(wire(new HoldfastError(code, 'why'))).toEqual({
        status: ERROR_CODES[code].status,
        body: { type: 'error', error: { type: ERROR_CODES[code].type, message: 'why' } },
      })
    }
  })

  it("uses the openai envelope for openai, and holdfast's own {error:{code,message}} where there is no dialect", () => {
    const err = new HoldfastError('BODY_TOO_LARGE', 'too big')
    expect(wire(err, openai)).toEqual({
      status: 413,
      body: { error: { message: 'too big', type: 'request_too_large', param: null, code: null } },
    })
    const admin = toWireError(err, undefined)
    expect([admin.status, JSON.parse(admin.body.toString())]).toEqual([
      413,
      { error: { code: 'BODY_TOO_LARGE', message: 'too big' } },
    ])
  })
})

describe('hideHomeInErrors', () => {
  it('shows <home> for the home as given and as resolved through a symlink, the longer form first', () => {
    const real = path.join(tmp, 'home-real')
    const link = path.join(tmp, 'home')
    fs.mkdirSync(real)
    fs.symlinkSync(real, link)
    hideHomeInErrors(link)
    const err = new HoldfastError('INTERNAL', `cannot write ${real}/a.json; see ${link}/b and ${link}/c`)
    expect(wire(err).body).toMatchObject({
      error: { message: 'cannot write <home>/a.json; see <home>/b and <home>/c' },
    })
  })

  it('takes a home that does not exist yet or is relative by its resolved path, and forgets the previous home', () => {
    const first = path.join(tmp, 'first')
    hideHomeInErrors(first)
    const rel = path.relative(process.cwd(), path.join(tmp, 'later'))
    hideHomeInErrors(rel)
    const err = new HoldfastError('INTERNAL', `${path.join(tmp, 'later')}/x and ${first}/y`)
    expect(wire(err).body).toMatchObject({ error: { message: `<home>/x and ${first}/y` } })
  })
})

describe('asHoldfastError', () => {
  it('keeps a HoldfastError as it is, and makes anything else INTERNAL with the cause chained', () => {
    const known = new HoldfastError('BAD_JSON', 'x')
    expect(asHoldfastError(known)).toBe(known)
    const cause = new Error('disk on fire')
    const wrapped = asHoldfastError(cause)
    expect([wrapped.code, wrapped.message, wrapped.cause, wrapped.status]).toEqual([
      'INTERNAL',
      'holdfast failed: disk on fire',
      cause,
      500,
    ])
    expect(asHoldfastError('a string').message).toBe('holdfast failed: a string')
    expect(asHoldfastError(undefined).message).toBe('holdfast failed: undefined')
  })
})

describe('sendError and sendJson on a real connection', () => {
  it('writes the status, a JSON content-type, the exact content-length and the code header', async () => {
    handler = (res) => sendError(res, anthropic, new HoldfastError('SHUTTING_DOWN', 'retry shortly'))
    const r = await fetch(`${base}/`)
    const text = await r.text()
    expect([r.status, r.headers.get('content-type'), r.headers.get('x-holdfast-error')]).toEqual([
      503,
      'application/json',
      'SHUTTING_DOWN',
    ])
    expect(Number(r.headers.get('content-length'))).toBe(Buffer.byteLength(text))
    expect(JSON.parse(text)).toEqual({
      type: 'error',
      error: { type: 'overloaded_error', message: 'retry shortly' },
    })
  })

  it('answers an unknown fault as a 500 INTERNAL', async () => {
    handler = (res) => sendError(res, openai, new TypeError('x is undefined'))
    const r = await fetch(`${base}/`)
    expect([r.status, r.headers.get('x-holdfast-error')]).toEqual([500, 'INTERNAL'])
    expect(((await r.json()) as { error: { message: string } }).error.message).toBe(
      'holdfast failed: x is undefined',
    )
  })

  it('cuts the connection when the headers already went out: the client sees a broken answer, not a second one', async () => {
    handler = (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.write('event: ping\n\n', () => sendError(res, anthropic, new HoldfastError('INTERNAL', 'late')))
    }
    const r = await fetch(`${base}/`)
    expect(r.status).toBe(200)
    await expect(r.text()).rejects.toThrow()
  })

  it('sendJson writes the value as one JSON line with its length', async () => {
    handler = (res) => sendJson(res, 202, { ok: true, name: 'é' })
    const r = await fetch(`${base}/`)
    const text = await r.text()
    expect([r.status, r.headers.get('content-type'), text]).toEqual([
      202,
      'application/json',
      '{"ok":true,"name":"é"}\n',
    ])
    expect(Number(r.headers.get('content-length'))).toBe(Buffer.byteLength(text))
  })
})
