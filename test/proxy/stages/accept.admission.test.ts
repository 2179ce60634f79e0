/**
 * What may enter: names are at most 100 bytes of UTF-8 and header names decode as path names do;
 * web pages cannot use the provider endpoints unless their origin is listed; OPTIONS never goes
 * upstream; recorded endpoints take JSON only; Host is parsed strictly; Node's own refusals and a
 * malformed address prefix answer in the dialect's envelope; no answer shows the home's absolute
 * path; credentials in query strings never reach a record; a stalled body is a 408, and so is one
 * that trickles slower than `timeouts.request_body_min_bytes_per_s`. Every refusal
 * leaves nothing on disk and sends nothing upstream.
 */
import http from 'node:http'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { fitName, MAX_NAME_BYTES } from '../../../proxy/core/naming'
import { redactQuery } from '../../../proxy/core/headers'
import { git, startProxy, type Proxy } from '../../support/harness'
import { listTree, rawRequest, type RawResponse } from '../../support/raw-http'

let p: Proxy
beforeAll(async () => {
  p = await startProxy({
    config: {
      browser_origins: ['https://app.example'],
      timeouts: { request_body_idle_ms: 300 },
    },
  })
})
afterAll(() => p.close())
beforeEach(() => p.fake.reset())

const HELLO = '{"model":"claude-sonnet-4-5","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}'
const JSON_HEADERS = { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' }

const post = (route: string, headers: Record<string, string> = JSON_HEADERS, body = HELLO) =>
  rawRequest(p.url, { method: 'POST', path: route, headers, body })

function anthropicError(r: RawResponse, status: number): string {
  expect(r.status).toBe(status)
  const body = JSON.parse(r.body.toString()) as { type: string; error: { type: string; message: string } }
  expect(body.type).toBe('error')
  expect(body.error.type).toEqual(expect.any(String))
  return body.error.message
}

/** Everything under the workspaces, once steps in flight have finished. */
const homeTree = async (): Promise<string[]> => {
  await p.settled()
  return listTree(path.join(p.home, 'workspaces'))
}

/** One raw exchange over a socket: what the server answers to exactly these bytes. */
function rawSocket(bytes: string, waitMs = 5000): Promise<string> {
  const u = new URL(p.url)
  return new Promise((resolve, reject) => {
    const s = net.connect(Number(u.port), u.hostname, () => s.write(bytes, 'latin1'))
    let got = ''
    // Cleared once the server ends the exchange: a pending timer kept jest's worker alive (regression).
    const timer = setTimeout(() => {
      s.destroy()
      resolve(got)
    }, waitMs)
    const done = (): void => {
      clearTimeout(timer)
      resolve(got)
    }
    s.on('data', (d) => (got += d.toString('latin1')))
    s.on('end', done)
    s.on('close', done)
    s.on('error', (err) => {
      clearTimeout(timer)
      reject(err)
    })
  })
}

describe('names', () => {
  it.each([101, 251, 255, 256, 300])(
    'refuses a %i-byte agent name with a 400 naming the limit, leaving nothing',
    async (n) => {
      const before = await homeTree()
      const r = await post(`/w/names/a/${'a'.repeat(n)}/v1/messages`)
      expect(anthropicError(r, 400)).toMatch(
        `is ${n} bytes long: a name is at most ${MAX_NAME_BYTES} bytes of UTF-8`,
      )
      expect(await homeTree()).toEqual(before)
      expect(p.fake.received).toHaveLength(0)
    },
  )

  /** Steps on an agent's branch (its commits after the config it was created on). */
  const steps = (agent: string): string =>
    git(p.repo('names'), 'rev-list', '--count', `config/default..agents/${agent}`).trim()

  it('records a step for a name of exactly 100 bytes of UTF-8 (multi-byte characters counted as bytes)', async () => {
    const name = 'é'.repeat(50) // 100 bytes
    const r = await post(`/w/names/a/${encodeURIComponent(name)}/v1/messages`)
    expect(r.status).toBe(200)
    await p.settled()
    expect(steps(name)).toBe('1')
    const tooLong = await post(`/w/names/a/${encodeURIComponent(name + 'x')}/v1/messages`)
    expect(anthropicError(tooLong, 400)).toMatch('101 bytes long')
  })

  /** A step whose x-holdfast-agent header carries exactly these bytes. */
  const headerStep = (agentBytes: Buffer): Promise<string> =>
    rawSocket(
      'POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n' +
        'anthropic-version: 2023-06-01\r\nx-holdfast-workspace: names\r\n' +
        `x-holdfast-agent: ${agentBytes.toString('latin1')}\r\ncontent-length: ${HELLO.length}\r\n` +
        `connection: close\r\n\r\n${HELLO}`,
    )

  it('decodes a name from an x-holdfast-* header as UTF-8, the same agent as its path form', async () => {
    expect((await post('/w/names/a/caf%C3%A9/v1/messages')).status).toBe(200)
    expect(await headerStep(Buffer.from('café', 'utf8'))).toMatch(/^HTTP\/1\.1 200 /)
    await p.settled()
    expect(steps('café')).toBe('2')
  })

  it('refuses a header name that is not UTF-8', async () => {
    const got = await headerStep(Buffer.from([0x63, 0x61, 0x66, 0xe9])) // latin1 "café"
    expect(got).toMatch(/^HTTP\/1\.1 400 /)
    expect(got).toContain('the x-holdfast-agent header is not valid UTF-8')
  })

  it('shortens a derived name that would pass the limit, deterministically and distinctly', () => {
    const long = `${'m'.repeat(90)}.sub-${'f'.repeat(40)}`
    const short = fitName(long)
    expect(Buffer.byteLength(short)).toBeLessThanOrEqual(MAX_NAME_BYTES)
    expect(short).toBe(fitName(long))
    expect(fitName(`${long}0`)).not.toBe(short)
    expect(short.startsWith('m'.repeat(90))).toBe(true)
    expect(fitName('main.sub-ab')).toBe('main.sub-ab')
    const cut = fitName('é'.repeat(80)) // a character cut in half is dropped, not mangled
    expect(cut).toMatch(/^(é)+-[0-9a-f]{8}$/)
  })
})

describe('browsers', () => {
  it.each(['/v1/messages', '/w/web/a/main/v1/messages', '/v1/models'])(
    'refuses a web page (Origin) on %s with a 403 in the envelope, sending nothing',
    async (route) => {
      const r = await rawRequest(p.url, {
        method: route === '/v1/models' ? 'GET' : 'POST',
        path: route,
        headers: { ...JSON_HEADERS, origin: 'https://evil.example' },
        body: route === '/v1/models' ? undefined : HELLO,
      })
      expect(anthropicError(r, 403)).toMatch(/Origin "https:\/\/evil\.example"/)
      expect(p.fake.received).toHaveLength(0)
      expect(fs.existsSync(path.join(p.home, 'workspaces', 'web'))).toBe(false)
    },
  )

  it('serves a listed origin, with the CORS headers a browser needs', async () => {
    const r = await post('/w/web/a/main/v1/messages', { ...JSON_HEADERS, origin: 'https://app.example' })
    expect(r.status).toBe(200)
    expect(r.headers['access-control-allow-origin']).toBe('https://app.example')
  })

  it('answers OPTIONS itself: a preflight for a listed origin, a 403 for another, nothing upstream', async () => {
    const ok = await rawRequest(p.url, {
      method: 'OPTIONS',
      path: '/v1/messages',
      headers: {
        origin: 'https://app.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,x-api-key',
      },
    })
    expect(ok.status).toBe(204)
    expect(ok.headers['access-control-allow-origin']).toBe('https://app.example')
    // What it asked for, and the headers the token travels in.
    expect(String(ok.headers['access-control-allow-headers']).split(', ')).toEqual(
      expect.arrayContaining(['content-type', 'x-api-key', 'x-holdfast-token', 'authorization']),
    )
    const refused = await rawRequest(p.url, {
      method: 'OPTIONS',
      path: '/w/web/a/main/v1/chat/completions',
      headers: { origin: 'https://evil.example' },
    })
    expect(refused.status).toBe(403)
    expect(JSON.parse(refused.body.toString())).toMatchObject({ error: { type: 'permission_error' } })
    const bare = await rawRequest(p.url, { method: 'OPTIONS', path: '/v1/models' })
    expect(bare.status).toBe(204)
    expect(p.fake.received).toHaveLength(0)
  })

  it.each([
    ['text/plain', 415],
    ['application/x-www-form-urlencoded', 415],
    ['application/json-seq', 415],
    ['application/json; charset=utf-8', 200],
    ['Application/JSON', 200],
  ])('takes a recorded body of content-type %s with %i', async (type, status) => {
    const r = await post('/w/types/a/main/v1/messages', {
      'content-type': type,
      'anthropic-version': '2023-06-01',
    })
    expect(r.status).toBe(status)
    if (status !== 200) {
      expect(anthropicError(r, status)).toMatch('must have content-type: application/json')
      expect(p.fake.received).toHaveLength(0)
    }
  })

  it('refuses a recorded body without a content-type, leaving nothing on disk', async () => {
    const before = await homeTree()
    const r = await rawRequest(p.url, { method: 'POST', path: '/w/untyped/a/main/v1/messages', body: HELLO })
    expect(r.status).toBe(415)
    expect(await homeTree()).toEqual(before)
  })

  it.each([
    '127.0.0.1:1@evil.example',
    'localhost:99.evil.example',
    'localhost:80:80',
    'evil.example',
    '[::1]x',
  ])('refuses Host %s', async (host) => {
    const r = await post('/v1/messages', { ...JSON_HEADERS, host })
    expect(anthropicError(r, 403)).toMatch('is not a loopback name')
    expect(p.fake.received).toHaveLength(0)
  })

  it('refuses an admin body whose content-type only starts like JSON', async () => {
    const r = await rawRequest(p.url, {
      method: 'POST',
      path: '/_holdfast/clients/load',
      headers: { 'content-type': 'application/json-seq', 'x-holdfast-token': p.token },
      body: '{}',
    })
    expect(r.status).toBe(403)
    expect(JSON.parse(r.body.toString())).toMatchObject({ error: { code: 'ADMIN_REFUSED' } })
  })
})

describe('answers', () => {
  it('answers a malformed request line on a provider path in the dialect envelope', async () => {
    const got = await rawSocket('POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header\r\n\r\n')
    expect(got).toMatch(/^HTTP\/1\.1 400 /)
    const body = JSON.parse(got.slice(got.indexOf('\r\n\r\n') + 4)) as { error: { type: string } }
    expect(body.error.type).toBe('invalid_request_error') // openai's envelope: {error: {message, type, …}}
    expect(got).toContain('x-holdfast-error: BAD_HTTP')
  })

  it('answers headers over the limit with a 431 in the envelope that names the limit and how to raise it', async () => {
    const got = await rawSocket(
      `POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`,
    )
    expect(got).toMatch(/^HTTP\/1\.1 431 /)
    const body = JSON.parse(got.slice(got.indexOf('\r\n\r\n') + 4)) as { error: { message: string } }
    expect(body).toMatchObject({ type: 'error', error: { type: 'request_too_large' } })
    expect(body.error.message).toContain(`the limit of ${http.maxHeaderSize} bytes`)
    expect(body.error.message).toContain('NODE_OPTIONS=--max-http-header-size=')
  })

  it.each(['/w/x/v1/messages', '/w//a/main/v1/messages', '/w/x/a/v1/messages'])(
    'answers the malformed address %s in the dialect envelope',
    async (route) => {
      const r = await post(route)
      expect(r.status).toBeGreaterThanOrEqual(400)
      expect(r.status).toBeLessThan(500)
      expect(JSON.parse(r.body.toString())).toMatchObject({
        type: 'error',
        error: { message: expect.any(String) },
      })
    },
  )

  it('never shows the absolute path of the home in an answer', async () => {
    fs.mkdirSync(path.join(p.home, 'workspaces'), { recursive: true })
    fs.writeFileSync(path.join(p.home, 'workspaces', 'blocked'), 'a file where a workspace would be')
    const r = await post('/w/blocked/a/main/v1/messages')
    const message = anthropicError(r, 500)
    expect(message).not.toContain(p.home)
    expect(message).toContain('<home>')
  })

  it('answers HEAD / and HEAD on an address prefix with 200 (a connectivity probe)', async () => {
    for (const route of ['/', '/w/probe/a/main']) {
      const r = await rawRequest(p.url, { method: 'HEAD', path: route })
      expect(r.status).toBe(200)
    }
    expect(p.fake.received).toHaveLength(0)
  })

  it('answers a body that stalls before its content-length with a 408, leaving nothing', async () => {
    const before = await homeTree()
    const got = await rawSocket(
      'POST /w/stall/a/main/v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n' +
        'anthropic-version: 2023-06-01\r\ncontent-length: 500\r\n\r\n{"model":"m"',
    )
    expect(got).toMatch(/^HTTP\/1\.1 408 /)
    expect(JSON.parse(got.slice(got.indexOf('\r\n\r\n') + 4))).toMatchObject({
      error: { type: 'timeout_error' },
    })
    expect(await homeTree()).toEqual(before)
  })
})

describe('a body that trickles', () => {
  let slow: Proxy
  beforeAll(async () => {
    slow = await startProxy({
      config: { timeouts: { request_body_idle_ms: 2000, request_body_min_bytes_per_s: 200 } },
    })
  })
  afterAll(() => slow.close())

  it('is answered 408 BODY_TOO_SLOW in the envelope however steadily it comes, leaving nothing', async () => {
    // A byte every 100 ms is never silent for 2 s, but far below 200 bytes/s.
    const u = new URL(slow.url)
    const socket = net.connect(Number(u.port), u.hostname)
    let got = ''
    socket.on('data', (d: Buffer) => (got += d.toString()))
    const closed = new Promise<void>((r) => socket.on('close', () => r()))
    socket.on('error', () => undefined)
    socket.write(
      'POST /w/trickle/a/main/v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n' +
        `anthropic-version: 2023-06-01\r\ncontent-length: ${HELLO.length}\r\n\r\n`,
    )
    const t0 = Date.now()
    for (let i = 0; i < HELLO.length && !socket.destroyed && got === ''; i++) {
      socket.write(HELLO[i] as string)
      await new Promise((r) => setTimeout(r, 100))
    }
    await closed
    expect(got).toMatch(/^HTTP\/1\.1 408 /)
    expect(got).toContain('x-holdfast-error: BODY_TOO_SLOW')
    expect(JSON.parse(got.slice(got.indexOf('\r\n\r\n') + 4))).toEqual({
      type: 'error',
      error: { type: 'timeout_error', message: expect.stringContaining('slower than 200 bytes/s') },
    })
    expect(Date.now() - t0).toBeLessThan(HELLO.length * 100)
    await slow.settled()
    expect(slow.fake.received).toHaveLength(0)
    expect(listTree(path.join(slow.home, 'workspaces'))).toEqual([])
  })
})

describe('secrets in URLs', () => {
  it('redacts credential query parameters and keeps every other byte', () => {
    expect(redactQuery('/v1/messages?beta=true&key=sk-1&X-Api-Key=2&token=&sig=abc#f')).toBe(
      '/v1/messages?beta=true&key=REDACTED&X-Api-Key=REDACTED&token=REDACTED&sig=REDACTED#f',
    )
    expect(redactQuery('/v1/messages')).toBe('/v1/messages')
    expect(redactQuery('https://h/v1?access_token=a%20b&keep=1')).toBe(
      'https://h/v1?access_token=REDACTED&keep=1',
    )
  })

  it('keeps a credential in the query out of the record while the provider still receives it', async () => {
    const r = await post('/w/query/a/main/v1/messages?beta=true&api_key=sk-live-123&sig=s3cr3t')
    expect(r.status).toBe(200)
    expect(p.fake.received[0]?.url).toBe('/v1/messages?beta=true&api_key=sk-live-123&sig=s3cr3t')
    await p.settled()
    const meta = git(p.repo('query'), 'show', 'agents/main:steps/main/001/meta.json')
    expect(meta).not.toContain('sk-live-123')
    expect(meta).not.toContain('s3cr3t')
    expect(JSON.parse(meta)).toMatchObject({
      endpoint: '/v1/messages?beta=true&api_key=REDACTED&sig=REDACTED',
    })
  })
})
