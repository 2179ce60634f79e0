/**
 * proxy/http/edge: answers to what never reaches the request handler, on a running proxy over raw
 * sockets. Rules: every answer is in the envelope of the path it was sent to (anthropic, openai,
 * holdfast's own) with its code in `x-holdfast-error` and the connection closed after it — an
 * `Expect` other than 100-continue (417, where Node alone answers a bare 417), a lowercase or
 * unknown method (400, where the admin envelope was given), `CONNECT` (405, where Node gave no
 * answer at all); nothing reaches the provider or the disk.
 */
import net from 'node:net'
import path from 'node:path'
import { envelopeFor } from '../../../proxy/http/edge'
import { startProxy, type Proxy } from '../../support/harness'
import { listTree } from '../../support/raw-http'

let p: Proxy
beforeAll(async () => {
  p = await startProxy()
})
afterAll(() => p.close())

/** Exactly these bytes on a fresh connection; everything the server sends until it closes. */
function rawSocket(bytes: string): Promise<string> {
  const u = new URL(p.url)
  return new Promise((resolve, reject) => {
    const s = net.connect(Number(u.port), u.hostname, () => s.write(bytes, 'latin1'))
    let got = ''
    const timer = setTimeout(() => {
      s.destroy()
      reject(new Error(`the server did not close the connection; it sent ${JSON.stringify(got)}`))
    }, 20_000)
    s.on('data', (d: Buffer) => (got += d.toString('latin1')))
    s.on('close', () => {
      clearTimeout(timer)
      resolve(got)
    })
    s.on('error', reject)
  })
}

interface Answer {
  status: number
  code: string | undefined
  body: unknown
}

function parse(got: string): Answer {
  const head = got.slice(0, got.indexOf('\r\n\r\n'))
  return {
    status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(head)?.[1]),
    code: /\r\nx-holdfast-error: ([A-Z_]+)/i.exec(head)?.[1],
    body: JSON.parse(got.slice(got.indexOf('\r\n\r\n') + 4)),
  }
}

const anthropic = (type: string) => ({ type: 'error', error: { type, message: expect.any(String) } })
const openai = (type: string) => ({ error: { message: expect.any(String), type, param: null, code: null } })
const own = (code: string) => ({ error: { code, message: expect.any(String) } })

describe('envelopeFor', () => {
  it("gives a provider path its dialect's envelope and anything else holdfast's own", () => {
    expect(envelopeFor('/v1/messages?beta=true')?.name).toBe('anthropic')
    expect(envelopeFor('/w/a/a/b/v1/chat/completions')?.name).toBe('openai')
    expect(envelopeFor('/v1/models', { 'anthropic-version': '2023-06-01' })?.name).toBe('anthropic')
    expect(envelopeFor('/_holdfast/health')).toBeUndefined()
    expect(envelopeFor('/w/a/a/b/mcp')).toBeUndefined()
    expect(envelopeFor('api.anthropic.com:443')).toBeUndefined()
  })
})

describe('answers Node would give bare', () => {
  it.each([
    ['/v1/messages', 'anthropic'],
    ['/w/edge/a/main/v1/chat/completions', 'openai'],
    ['/_holdfast/health', 'own'],
  ])('answers Expect: bogus on %s with 417 in the %s envelope', async (route) => {
    const got = await rawSocket(
      `POST ${route} HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\nexpect: bogus\r\ncontent-length: 2\r\n\r\n{}`,
    )
    const a = parse(got)
    expect([a.status, a.code]).toEqual([417, 'EXPECTATION_FAILED'])
    expect(a.body).toEqual(
      route.startsWith('/v1/')
        ? anthropic('invalid_request_error')
        : route.startsWith('/w/')
          ? openai('invalid_request_error')
          : own('EXPECTATION_FAILED'),
    )
    expect(got).toMatch(/\r\nconnection: close\r\n/i)
  })

  it.each(['post', 'Post', 'get', 'FOO'])(
    'answers the method %s on /v1/messages with 400 in the anthropic envelope, naming it',
    async (method) => {
      const a = parse(await rawSocket(`${method} /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`))
      expect([a.status, a.code]).toEqual([400, 'BAD_HTTP'])
      expect(a.body).toEqual(anthropic('invalid_request_error'))
      expect(JSON.stringify(a.body)).toContain(`\\"${method}\\" is not a method`)
    },
  )

  it('answers a lowercase method on an openai path in the openai envelope', async () => {
    const a = parse(
      await rawSocket('post /w/edge/a/main/v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'),
    )
    expect([a.status, a.body]).toEqual([400, openai('invalid_request_error')])
  })

  it.each([
    ['api.anthropic.com:443', own('METHOD_NOT_ALLOWED')],
    ['/v1/messages', anthropic('invalid_request_error')],
  ])('answers CONNECT %s with 405, saying holdfast is no forward proxy', async (target, envelope) => {
    const a = parse(await rawSocket(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`))
    expect([a.status, a.code, a.body]).toEqual([405, 'METHOD_NOT_ALLOWED', envelope])
    expect(JSON.stringify(a.body)).toContain('not a forward proxy')
  })

  it('answers a request without a Host header with 400 in the envelope of its path, where Node alone answers a bare 400', async () => {
    const a = parse(await rawSocket('GET /_holdfast/health HTTP/1.1\r\nconnection: close\r\n\r\n'))
    expect([a.status, a.code, a.body]).toEqual([400, 'BAD_HTTP', own('BAD_HTTP')])
    expect(JSON.stringify(a.body)).toContain('Host')
  })

  it('keeps every header of a request with 2 000 of them under the size limit (Node alone drops all after the 1 000th, Host with them, and answers a bare 400)', async () => {
    const many = Array.from({ length: 2000 }, (_, i) => `x${i}:1\r\n`).join('')
    const a = parse(
      await rawSocket(
        `GET /_holdfast/nothing HTTP/1.1\r\n${many}Host: 127.0.0.1\r\nconnection: close\r\n\r\n`,
      ),
    )
    // Past the Host check and the token check: the last header arrived, and the answer is holdfast's.
    expect([a.status, a.code]).toEqual([401, 'TOKEN_REQUIRED'])
  })

  it('sends nothing upstream and writes nothing for any of them', async () => {
    await p.settled()
    expect(p.fake.received).toHaveLength(0)
    expect(listTree(path.join(p.home, 'workspaces'))).toEqual([])
  })
})
