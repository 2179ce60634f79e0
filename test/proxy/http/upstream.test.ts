/** The header rules of proxy/http/upstream.ts as pure functions: what reaches the provider and the client. */
import { execFileSync } from 'node:child_process'
import http from 'node:http'
import path from 'node:path'
import { forwardHeaders, responseHeaders, Upstream, upstreamUrl } from '../../../proxy/http/upstream'
import { startProxy, type Proxy } from '../../support/harness'

const anthropicRow = { dialect: 'anthropic' as const, base_url: 'https://api.anthropic.com' }
const openaiRow = { dialect: 'openai' as const, base_url: 'https://api.openai.com/v1' }

describe('upstream header rules', () => {
  it('drops response headers the provider named in Connection, as well as hop-by-hop ones', () => {
    const out = responseHeaders({
      connection: 'x-trace, keep-alive',
      'x-trace': 'abc',
      'keep-alive': 'timeout=5',
      'transfer-encoding': 'chunked',
      'request-id': 'req_1',
      'retry-after': '7',
    })
    expect(out).toEqual({ 'request-id': 'req_1', 'retry-after': '7' })
  })

  it('sets host and content-length from what is sent, and the row key over the client key', () => {
    const out = forwardHeaders(
      {
        host: '127.0.0.1:8787',
        'content-length': '5',
        authorization: 'Bearer client',
        'x-holdfast-agent': 'a',
      },
      new URL('https://api.anthropic.com/v1/messages'),
      42,
      anthropicRow,
      'sk-row',
    )
    expect(out).toEqual({ host: 'api.anthropic.com', 'content-length': '42', 'x-api-key': 'sk-row' })
  })

  it('maps /v1/X to <base_url>/X for openai rows and keeps the query', () => {
    expect(upstreamUrl(openaiRow, '/v1/chat/completions?x=1').href).toBe(
      'https://api.openai.com/v1/chat/completions?x=1',
    )
    expect(upstreamUrl(anthropicRow, '/v1/messages?beta=true').href).toBe(
      'https://api.anthropic.com/v1/messages?beta=true',
    )
  })
})

describe('the HTTP client', () => {
  it('is not loaded until the first request, and an upstream that sent nothing closes', async () => {
    const root = path.join(__dirname, '..', '..', '..')
    const loaded = execFileSync(
      process.execPath,
      [
        '-r',
        path.join(root, 'scripts', 'register.js'),
        '-e',
        `const { Upstream } = require('./proxy/http/upstream')
         new Upstream({ headersTimeoutMs: 1000, bodyTimeoutMs: 1000 })
         console.log(Object.keys(require.cache).filter((k) => k.includes('/node_modules/undici/')).length)`,
      ],
      { cwd: root, encoding: 'utf8' },
    )
    expect(loaded.trim()).toBe('0')
    await expect(
      new Upstream({ headersTimeoutMs: 1000, bodyTimeoutMs: 1000 }).close(),
    ).resolves.toBeUndefined()
  })
})

describe('pass-through (a provider path holdfast does not record)', () => {
  let p: Proxy
  beforeAll(async () => {
    p = await startProxy()
  })
  afterAll(() => p.close())

  it('gives the client none of the hop-by-hop or Connection-listed headers the provider sent, as the recorded path does', async () => {
    p.fake.enqueue({
      path: '/v1/models',
      body: '{"data":[]}',
      headers: {
        connection: 'x-internal',
        'x-internal': 'secret',
        'proxy-authenticate': 'Basic realm="upstream"',
        'keep-alive': 'timeout=99',
        'request-id': 'req_pass',
      },
    })
    const r = await fetch(`${p.url}/v1/models`, { headers: { authorization: 'Bearer k' } })
    expect(r.status).toBe(200)
    expect(await r.text()).toBe('{"data":[]}')
    expect(r.headers.get('request-id')).toBe('req_pass')
    for (const h of ['x-internal', 'proxy-authenticate']) expect(r.headers.get(h)).toBeNull()
    expect(r.headers.get('keep-alive')).not.toBe('timeout=99') // Node's own keep-alive header may be there
  })

  it('marks a passed-through answer x-holdfast-passthrough: 1, a provider 404 for a path holdfast does not know included', async () => {
    const r = await fetch(`${p.url}/w/pt/a/main/v1/no-such-endpoint`, {
      headers: { authorization: 'Bearer k' },
    })
    expect(r.status).toBe(404)
    expect(r.headers.get('x-holdfast-passthrough')).toBe('1')
    expect(r.headers.get('x-holdfast-error')).toBeNull() // the provider's 404, not holdfast's
    expect(p.fake.received.at(-1)!.url).toBe('/v1/no-such-endpoint')
    const recorded = await fetch(`${p.url}/w/pt/a/main/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'claude-x', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }),
    })
    expect(recorded.status).toBe(200)
    expect(recorded.headers.get('x-holdfast-passthrough')).toBeNull()
    await recorded.text()
  })

  it("sends the client's body and method unchanged, without its hop-by-hop or x-holdfast-* headers", async () => {
    p.fake.enqueue({ path: '/v1/embeddings', body: '{"ok":true}' })
    const body = JSON.stringify({ input: 'x'.repeat(5000) })
    // node:http, not fetch: fetch refuses to send a Connection header.
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(
        `${p.url}/v1/embeddings`,
        {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            authorization: 'Bearer k',
            connection: 'x-hop',
            'x-hop': '1',
            'x-holdfast-agent': 'a',
          },
        },
        (res) => {
          res.resume()
          res.on('end', () => resolve(res.statusCode ?? 0))
        },
      )
      req.on('error', reject)
      req.end(body)
    })
    expect(status).toBe(200)
    const got = p.fake.received.at(-1)!
    expect(got.method).toBe('POST')
    expect(got.body.toString()).toBe(body)
    expect(got.headers['x-hop']).toBeUndefined()
    expect(got.headers['x-holdfast-agent']).toBeUndefined()
    expect(got.headers.authorization).toBe('Bearer k')
  })
})
