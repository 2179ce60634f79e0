/**
 * Security rules (DESIGN §4, §12): a configured token (every request carries it), the loopback
 * Host guard against DNS rebinding, an admin surface no web page can drive, and no hop-by-hop or
 * `x-holdfast-*` header ever reaching the provider. The token by default (admin, MCP, rows that add
 * the operator's key): access.*.test.ts.
 */
import Anthropic from '@anthropic-ai/sdk'
import fs from 'node:fs'
import OpenAI from 'openai'
import { silentLogger } from '../../../proxy/process/log'
import { startServer } from '../../../proxy/serve'
import { configFor, git, startProxy, tempHome, writeConfig, type Proxy } from '../../support/harness'
import { allFileBytes, listTree, postAnthropic, postOpenai, rawRequest } from '../../support/raw-http'

const TOKEN = 'holdfast-test-token-7f3a9c21e5'
const HELLO = '{"model":"claude-fake-1","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}'
const HELLO_OAI = '{"model":"gpt-fake-1","messages":[{"role":"user","content":"hi"}]}'

let plain: Proxy
/** A POST that passes through unrecorded (POST /v1/responses itself is a recorded step). */
const EMBEDDINGS = '/v1/embeddings'
const EMBEDDINGS_ANSWER = '{"object":"list","data":[]}'
let tokened: Proxy
const PAGE = 'https://app.example'

beforeAll(async () => {
  ;[plain, tokened] = await Promise.all([
    startProxy(),
    startProxy({ config: { token: TOKEN, browser_origins: [PAGE] } }),
  ])
})
afterAll(async () => {
  await Promise.all([plain, tokened].map((q) => q?.close()))
})
beforeEach(() => {
  for (const q of [plain, tokened]) q.fake.reset()
})

/** Every `x-holdfast-*` header name among what the provider received. */
const holdfastHeadersAtFake = (q: Proxy): string[] =>
  q.fake.received.flatMap((r) => Object.keys(r.headers).filter((h) => h.startsWith('x-holdfast-')))

describe('a configured token', () => {
  it('refuses every request without x-holdfast-token with a 401, and writes nothing', async () => {
    await tokened.settled()
    const before = listTree(tokened.home)
    const a = await postAnthropic(tokened.url, '/v1/messages', HELLO)
    expect(a.status).toBe(401)
    expect(JSON.parse(a.body.toString())).toEqual({
      type: 'error',
      error: { type: 'authentication_error', message: expect.stringContaining('x-holdfast-token') },
    })
    const o = await postOpenai(tokened.url, '/v1/chat/completions', HELLO_OAI)
    expect(o.status).toBe(401)
    expect(JSON.parse(o.body.toString()).error).toMatchObject({ type: 'authentication_error' })
    const models = await rawRequest(tokened.url, { method: 'GET', path: '/v1/models' })
    expect(models.status).toBe(401)
    const health = await rawRequest(tokened.url, { method: 'GET', path: '/_holdfast/health' })
    expect(health.status).toBe(401)
    const wrong = await postAnthropic(tokened.url, '/v1/messages', HELLO, {
      'x-holdfast-token': TOKEN.replace(/.$/, 'X'),
    })
    expect(wrong.status).toBe(401)
    const prefix = await postAnthropic(tokened.url, '/v1/messages', HELLO, {
      'x-holdfast-token': TOKEN.slice(0, 16),
    })
    expect(prefix.status).toBe(401)
    await tokened.settled()
    expect(tokened.fake.received).toHaveLength(0)
    expect(listTree(tokened.home)).toEqual(before)
  })

  it('proxies a request carrying the token, and no x-holdfast-* header reaches the provider', async () => {
    const r = await postAnthropic(tokened.url, '/v1/messages', HELLO, {
      'x-holdfast-token': TOKEN,
      'x-holdfast-workspace': 'sec',
      'x-holdfast-agent': 'tok',
      'x-holdfast-anything': '1',
    })
    expect(r.status).toBe(200)
    const models = await rawRequest(tokened.url, {
      method: 'GET',
      path: '/v1/models',
      headers: { 'x-holdfast-token': TOKEN, 'x-holdfast-agent': 'tok', 'anthropic-version': '2023-06-01' },
    })
    expect(models.status).toBe(200)
    expect(tokened.fake.received.map((x) => x.url)).toEqual(['/v1/messages', '/v1/models'])
    expect(holdfastHeadersAtFake(tokened)).toEqual([])
    await tokened.settled()
    expect(git(tokened.repo('sec'), 'log', '--format=%s', 'agents/tok')).toMatch(
      /^step 001: claude-fake-1 \[tok\]/,
    )
    const workspaces = `${tokened.home}/workspaces`
    expect(allFileBytes(workspaces).includes(TOKEN)).toBe(false)
    expect(git(tokened.repo('sec'), 'log', '-p', '--all')).not.toContain(TOKEN)
  })

  it('lets the SDKs through with the token as a default header, and refuses them without it', async () => {
    const ok = new Anthropic({
      baseURL: tokened.url,
      apiKey: 'sk-test',
      maxRetries: 0,
      defaultHeaders: { 'x-holdfast-token': TOKEN },
    })
    const msg = await ok.messages.create({
      model: 'claude-fake-1',
      max_tokens: 8,
      messages: [{ role: 'user', content: 'hi' }],
    })
    expect(msg.type).toBe('message')
    const refused = new OpenAI({ baseURL: `${tokened.url}/v1`, apiKey: 'sk-test', maxRetries: 0 })
    await expect(
      refused.chat.completions.create({ model: 'gpt-fake-1', messages: [{ role: 'user', content: 'hi' }] }),
    ).rejects.toBeInstanceOf(OpenAI.AuthenticationError)
    await tokened.settled()
  })
})

describe('a configured token, carried as the client key', () => {
  it.each([
    ['x-api-key', { 'x-api-key': TOKEN }],
    ['Authorization: Bearer', { 'x-api-key': '', authorization: `Bearer ${TOKEN}` }],
  ])(
    'lets a request through with the token in %s, and the token never reaches the provider',
    async (_, h) => {
      const r = await postAnthropic(tokened.url, '/w/sec/a/askey/v1/messages', HELLO, h)
      expect(r.status).toBe(200)
      const got = tokened.fake.received[0]?.headers ?? {}
      expect(JSON.stringify(got)).not.toContain(TOKEN)
      await tokened.settled()
      expect(allFileBytes(tokened.home + '/workspaces').includes(TOKEN)).toBe(false)
    },
  )

  it('refuses the token under another scheme or with anything around it', async () => {
    for (const h of [
      { 'x-api-key': `${TOKEN}x` },
      { 'x-api-key': '', authorization: `Basic ${TOKEN}` },
      { 'x-api-key': '', authorization: `Bearer${TOKEN}` },
      { 'x-api-key': '', authorization: `Bearer ${TOKEN} extra` },
      { 'x-holdfast-token': TOKEN.toUpperCase() },
      { 'x-api-key': TOKEN.slice(0, -1) },
    ]) {
      const r = await postAnthropic(tokened.url, '/v1/messages', HELLO, h)
      expect([JSON.stringify(h), r.status, r.headers['x-holdfast-error']]).toEqual([
        JSON.stringify(h),
        401,
        'TOKEN_REQUIRED',
      ])
    }
    expect(tokened.fake.received).toHaveLength(0)
  })

  it("passes a listed origin's CORS preflight without the token, and then its request with it", async () => {
    const pre = await rawRequest(tokened.url, {
      method: 'OPTIONS',
      path: '/v1/messages',
      headers: {
        origin: PAGE,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, anthropic-version, x-holdfast-token',
      },
    })
    expect(pre.status).toBe(204)
    expect(pre.headers['access-control-allow-origin']).toBe(PAGE)
    expect(String(pre.headers['access-control-allow-headers']).split(', ')).toEqual(
      expect.arrayContaining(['content-type', 'anthropic-version', 'x-holdfast-token']),
    )
    const refused = await postAnthropic(tokened.url, '/v1/messages', HELLO, { origin: PAGE })
    expect([refused.status, refused.headers['access-control-allow-origin']]).toEqual([401, PAGE])
    const ok = await postAnthropic(tokened.url, '/w/sec/a/page/v1/messages', HELLO, {
      origin: PAGE,
      'x-holdfast-token': TOKEN,
    })
    expect([ok.status, ok.headers['access-control-allow-origin']]).toEqual([200, PAGE])
    // Not for an origin it does not list, nor for an OPTIONS that is no page's preflight.
    const other = await rawRequest(tokened.url, {
      method: 'OPTIONS',
      path: '/v1/messages',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    })
    expect(other.status).toBe(401)
    const bare = await rawRequest(tokened.url, { method: 'OPTIONS', path: '/v1/messages' })
    expect(bare.status).toBe(401)
    expect(tokened.fake.received.map((r) => r.url)).toEqual(['/v1/messages'])
    await tokened.settled()
  })
})

describe('binding', () => {
  it('refuses to bind off loopback without a token, naming the address and the remedy', async () => {
    const home = tempHome()
    try {
      writeConfig(home, configFor(plain.fake))
      const saved = process.env.HOLDFAST_TOKEN
      delete process.env.HOLDFAST_TOKEN
      try {
        await expect(startServer({ home, host: '0.0.0.0', port: 0, log: silentLogger() })).rejects.toThrow(
          /binding 0\.0\.0\.0 \(off loopback\) requires a token/,
        )
      } finally {
        if (saved !== undefined) process.env.HOLDFAST_TOKEN = saved
      }
      expect(listTree(home)).toEqual(['holdfast.yaml'])
    } finally {
      fs.rmSync(home, { recursive: true, force: true })
    }
  })
})

describe('the Host guard (DNS rebinding)', () => {
  it.each([
    'evil.example',
    'evil.example:8787',
    'localhost.evil.example',
    '127.0.0.1.evil.example',
    '10.0.0.1',
  ])('refuses Host: %s with a 403 on every surface, and writes nothing', async (host) => {
    await plain.settled()
    const before = listTree(plain.home)
    const r = await postAnthropic(plain.url, '/v1/messages', HELLO, { host })
    expect(r.status).toBe(403)
    expect(JSON.parse(r.body.toString())).toEqual({
      type: 'error',
      error: { type: 'permission_error', message: expect.stringContaining('not a loopback name') },
    })
    for (const path of ['/v1/models', '/_holdfast/health']) {
      expect((await rawRequest(plain.url, { method: 'GET', path, headers: { host } })).status).toBe(403)
    }
    await plain.settled()
    expect(plain.fake.received).toHaveLength(0)
    expect(listTree(plain.home)).toEqual(before)
  })

  it.each(['127.0.0.1', 'localhost', '[::1]', 'app.localhost'])(
    'accepts the loopback Host %s',
    async (name) => {
      const port = new URL(plain.url).port
      const r = await rawRequest(plain.url, {
        method: 'GET',
        path: '/_holdfast/health',
        headers: { host: `${name}:${port}`, 'x-holdfast-token': plain.token },
      })
      expect(r.status).toBe(200)
    },
  )
})

describe('the admin surface', () => {
  it('answers GET /_holdfast/health with 200 JSON', async () => {
    const r = await rawRequest(plain.url, {
      method: 'GET',
      path: '/_holdfast/health',
      headers: { 'x-holdfast-token': plain.token },
    })
    expect(r.status).toBe(200)
    expect(r.headers['content-type']).toBe('application/json')
    expect(JSON.parse(r.body.toString())).toMatchObject({ ok: true, pid: process.pid, home: plain.home })
  })

  it.each(['http://evil.example', 'null', `http://127.0.0.1`])(
    'refuses a request with Origin: %s (a web page) with a 403',
    async (origin) => {
      const r = await rawRequest(plain.url, {
        method: 'GET',
        path: '/_holdfast/health',
        headers: { origin, 'x-holdfast-token': plain.token },
      })
      expect(r.status).toBe(403)
      expect(JSON.parse(r.body.toString())).toEqual({
        error: { code: 'ADMIN_REFUSED', message: expect.stringContaining('Origin') },
      })
    },
  )

  it.each([
    ['text/plain', 'text/plain'],
    ['a form', 'application/x-www-form-urlencoded'],
    ['a multipart form', 'multipart/form-data; boundary=x'],
    ['no content-type', undefined],
  ])('refuses a POST with %s with a 403 (a form or a simple fetch cannot drive it)', async (_, type) => {
    const r = await rawRequest(plain.url, {
      path: '/_holdfast/tools/call',
      body: '{"client":"x","tool":"y"}',
      headers: { 'x-holdfast-token': plain.token, ...(type ? { 'content-type': type } : {}) },
    })
    expect(r.status).toBe(403)
    expect(JSON.parse(r.body.toString()).error.code).toBe('ADMIN_REFUSED')
  })

  it('lets a JSON POST past the guard (then: no such endpoint, 404)', async () => {
    const r = await rawRequest(plain.url, {
      path: '/_holdfast/no-such-thing',
      body: '{}',
      headers: { 'content-type': 'application/json', 'x-holdfast-token': plain.token },
    })
    expect(r.status).toBe(404)
  })
})

describe('hop-by-hop headers', () => {
  const HOP = {
    connection: 'x-custom, keep-alive',
    'keep-alive': 'timeout=5',
    'x-custom': '1',
    'proxy-authorization': 'Basic c2VjcmV0OnNlY3JldA==',
    'proxy-connection': 'keep-alive',
    te: 'trailers',
    upgrade: 'h2c',
    expect: '100-continue',
    'x-holdfast-note': 'not for the provider',
    'x-kept': 'yes',
  }
  const DROPPED = [
    'keep-alive',
    'x-custom',
    'proxy-authorization',
    'proxy-connection',
    'te',
    'upgrade',
    'expect',
  ]

  function expectClean(headers: Record<string, unknown>, fakeHost: string): void {
    for (const name of DROPPED) expect([name, headers[name]]).toEqual([name, undefined])
    expect(String(headers.connection ?? '')).not.toMatch(/x-custom/i)
    expect(Object.keys(headers).filter((h) => h.startsWith('x-holdfast-'))).toEqual([])
    expect(headers.host).toBe(fakeHost)
    expect(headers['x-kept']).toBe('yes')
  }

  it('never reach the provider on the recorded path; host and content-length match what is sent', async () => {
    const r = await rawRequest(plain.url, {
      path: '/w/hop/a/main/v1/messages',
      body: HELLO,
      chunked: true,
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...HOP },
    })
    expect(r.status).toBe(200)
    const got = plain.fake.received[0]
    expect(got).toBeDefined()
    expectClean(got?.headers ?? {}, new URL(plain.fake.url).host)
    expect(got?.headers['transfer-encoding']).toBeUndefined()
    expect(got?.headers['content-length']).toBe(String(got?.body.length))
    expect(got?.body.toString()).toBe(HELLO)
    await plain.settled()
    const meta = JSON.parse(git(plain.repo('hop'), 'show', 'agents/main:steps/main/001/meta.json'))
    expect(JSON.stringify(meta.request_headers)).not.toContain('c2VjcmV0')
  })

  it('never reach the provider on the pass-through path', async () => {
    const r = await rawRequest(plain.url, {
      method: 'GET',
      path: '/v1/models',
      headers: { 'anthropic-version': '2023-06-01', ...HOP },
    })
    expect(r.status).toBe(200)
    expectClean(plain.fake.received[0]?.headers ?? {}, new URL(plain.fake.url).host)
  })

  it('never reach the provider on a pass-through POST with a body', async () => {
    const body = '{"model":"text-embedding-3-small","input":"hi"}'
    plain.fake.enqueue({ path: EMBEDDINGS, body: EMBEDDINGS_ANSWER })
    const r = await rawRequest(plain.url, {
      path: EMBEDDINGS,
      body,
      headers: { 'content-type': 'application/json', ...HOP },
    })
    expect(r.status).toBe(200)
    const got = plain.fake.received[0]
    expectClean(got?.headers ?? {}, new URL(plain.fake.url).host)
    expect(got?.body.toString()).toBe(body)
    expect(got?.headers['content-length']).toBe(String(Buffer.byteLength(body)))
  })
})
