/**
 * Fidelity (DESIGN §4, §5): an unchanged request reaches the provider byte for byte and is the
 * committed record; a changed one differs only in the span the proxy changed; answers (JSON, SSE,
 * gzip) reach the client byte for byte and unbuffered; pass-through and count_tokens are routed
 * as the contract says and never become steps.
 */
import Anthropic from '@anthropic-ai/sdk'
import zlib from 'node:zlib'
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream'
import { git, gitBytes, startProxy, type Proxy } from '../../support/harness'
import { listTree, postAnthropic, postOpenai, rawRequest } from '../../support/raw-http'

let p: Proxy
/** The openai row's provider; `p.fake` is the anthropic row's. */
let oai: FakeUpstream

beforeAll(async () => {
  oai = await startFakeUpstream()
  p = await startProxy({
    config: {
      providers: {
        openai: { dialect: 'openai', base_url: oai.openaiBaseUrl, prompt_cache_key: 'agent' },
      },
    },
  })
})
afterAll(async () => {
  await p.close()
  await oai.close()
})
beforeEach(() => {
  p.fake.reset()
  oai.reset()
})

const show = (ws: string, agent: string, file: string, n = '001'): Buffer =>
  gitBytes(p.repo(ws), 'show', `agents/${agent}:steps/${agent}/${n}/${file}`)
const meta = (ws: string, agent: string, n = '001') => JSON.parse(show(ws, agent, 'meta.json', n).toString())

// Odd spacing, a trailing-zero decimal, an integer beyond 2^53, escaped and raw non-ASCII text,
// an unknown field and an unusual key order: any re-serialization would change these bytes.
const ODD_ANTHROPIC = String.raw`{ "messages" :[ {"role":"user","content":"caf\u00e9 \ud83d\ude00 é"} ],
	"x_unknown": {"z": 1, "a": [1.0, 1e2, -0.0]},  "temperature": 2.50,
  "big": 12345678901234567890, "model":"claude-fake-1" ,"max_tokens":16 }
`
const ODD_OPENAI = String.raw`{"messages":[{"role":"user","content":"caf\u00e9  é"}] ,  "temperature":2.50,
 "seed": 12345678901234567890, "x_unknown":{"b":[1.0]}, "model" : "gpt-fake-1"}`

describe('requests reach the provider as the client sent them', () => {
  // The cache and fallback fields a provider reads: none is stripped or rewritten on a first step
  // or on a second whose tools did not change (DESIGN §13, the cache's own word).
  it.each([
    ['fallbacks', '"fallbacks":[{"model":"claude-fake-2"}]'],
    ['diagnostics', '"diagnostics":{"previous_message_id":"msg_earlier"}'],
    ['top-level cache_control', '"cache_control":{"type":"ephemeral","ttl":"1h"}'],
    [
      'cache_control.scope',
      '"system":[{"type":"text","text":"S","cache_control":{"type":"ephemeral","scope":"global"}}]',
    ],
  ])('never strips %s: it reaches the provider byte for byte, step after step', async (name, field) => {
    const agent = name.replace(/\W+/g, '-')
    for (const content of ['one', 'two']) {
      const body = `{"model":"claude-fake-1","max_tokens":8,${field},"messages":[{"role":"user","content":"${content}"}]}`
      const r = await postAnthropic(p.url, `/w/keep/a/${agent}/v1/messages`, body)
      expect(r.status).toBe(200)
      expect(p.fake.received.at(-1)?.body.toString()).toBe(body)
    }
  })

  it('passes an unknown cache beta in anthropic-beta through unchanged', async () => {
    const beta = 'prompt-caching-scope-2026-01-05,some-future-cache-2027-01-01'
    const body = '{"model":"claude-fake-1","max_tokens":8,"messages":[{"role":"user","content":"b"}]}'
    const r = await postAnthropic(p.url, '/w/keep/a/beta/v1/messages', body, { 'anthropic-beta': beta })
    expect(r.status).toBe(200)
    expect(p.fake.received.at(-1)?.headers['anthropic-beta']).toBe(beta)
    expect(p.fake.received.at(-1)?.body.toString()).toBe(body)
  })

  it('an unchanged request reaches the provider byte for byte and the committed request.json is those bytes', async () => {
    const r = await postAnthropic(p.url, '/w/fid/a/odd/v1/messages', ODD_ANTHROPIC)
    expect(r.status).toBe(200)
    expect(p.fake.received).toHaveLength(1)
    expect(p.fake.received[0]?.body.equals(Buffer.from(ODD_ANTHROPIC))).toBe(true)
    await p.settled()
    expect(show('fid', 'odd', 'request.json').equals(Buffer.from(ODD_ANTHROPIC))).toBe(true)
    expect(meta('fid', 'odd').changes).toEqual([])
  })

  it('passes an unknown anthropic-* header and an unknown body field to the provider unchanged (open lists, as Claude Code’s gateway contract asks)', async () => {
    const body =
      '{"model":"claude-fake-1","max_tokens":8,"future_field":{"kept":[1,2.0]},"messages":[{"role":"user","content":"hi"}]}'
    const r = await postAnthropic(p.url, '/w/fid/a/open/v1/messages', body, {
      'anthropic-foo': 'bar; v=2',
      'anthropic-beta': 'some-future-beta-2099-01-01',
    })
    expect(r.status).toBe(200)
    const sent = p.fake.received[0]
    expect(sent?.headers['anthropic-foo']).toBe('bar; v=2')
    expect(sent?.headers['anthropic-beta']).toBe('some-future-beta-2099-01-01')
    expect(sent?.body.equals(Buffer.from(body))).toBe(true)
    await p.settled()
  })

  it('an openai request that already names its prompt_cache_key is left byte for byte', async () => {
    const body = ODD_OPENAI.replace('"seed"', '"prompt_cache_key": "mine", "seed"')
    const r = await postOpenai(p.url, '/w/fid/a/ownkey/v1/chat/completions', body)
    expect(r.status).toBe(200)
    expect(oai.received[0]?.body.toString()).toBe(body)
    await p.settled()
    expect(meta('fid', 'ownkey').changes).toEqual([])
  })

  it('prompt_cache_key: agent inserts "<ws>/<agent>" and changes no other byte, and meta.changes says so', async () => {
    const r = await postOpenai(p.url, '/w/fid/a/pck/v1/chat/completions', ODD_OPENAI)
    expect(r.status).toBe(200)
    const sent = oai.received[0]?.body.toString() ?? ''
    const member = '"prompt_cache_key":"fid/pck"'
    const at = sent.indexOf(member)
    expect(at).toBeGreaterThan(0)
    // The client's bytes are exactly what surrounds the inserted member and its one comma.
    const withoutMember = [
      sent.slice(0, at - 1) + sent.slice(at + member.length), // ",member" inserted
      sent.slice(0, at) + sent.slice(at + member.length + 1), // "member," inserted
    ]
    expect(withoutMember).toContain(ODD_OPENAI)
    expect(sent.length).toBe(ODD_OPENAI.length + member.length + 1)
    expect(JSON.parse(sent).prompt_cache_key).toBe('fid/pck')
    await p.settled()
    expect(show('fid', 'pck', 'request.json').toString()).toBe(sent)
    expect(meta('fid', 'pck').changes).toEqual([{ field: 'prompt_cache_key', why: expect.any(String) }])
  })

  it('keeps the query string: ?beta=true reaches the provider, with or without the prefix', async () => {
    const HELLO = '{"model":"claude-fake-1","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}'
    expect((await postAnthropic(p.url, '/v1/messages?beta=true', HELLO)).status).toBe(200)
    expect((await postAnthropic(p.url, '/w/fid/a/beta/v1/messages?beta=true', HELLO)).status).toBe(200)
    expect(p.fake.received.map((r) => r.url)).toEqual(['/v1/messages?beta=true', '/v1/messages?beta=true'])
    await p.settled()
    expect(meta('fid', 'beta').route.url).toBe(`${p.fake.url}/v1/messages?beta=true`)
  })
})

describe('answers reach the client as the provider sent them', () => {
  const HELLO = '{"model":"claude-fake-1","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}'
  const HELLO_OAI = '{"model":"gpt-fake-1","messages":[{"role":"user","content":"hi"}]}'

  it('passes status-independent provider headers intact (content-type, request-id, retry-after, rate limits)', async () => {
    const headers = {
      'content-type': 'application/json; charset=utf-8',
      'request-id': 'req_011CustomId',
      'retry-after': '3',
      'x-should-retry': 'false',
      'anthropic-ratelimit-tokens-remaining': '12345',
      'anthropic-ratelimit-input-tokens-reset': '2026-01-01T00:00:00Z',
    }
    p.fake.enqueue({ headers })
    const r = await postAnthropic(p.url, '/w/fid/a/headers/v1/messages', HELLO)
    expect(r.status).toBe(200)
    for (const [name, value] of Object.entries(headers))
      expect([name, r.headers[name]]).toEqual([name, value])
    expect(r.headers['anthropic-ratelimit-requests-limit']).toBe('4000')
    expect(r.headers['anthropic-ratelimit-requests-remaining']).toBe('3999')
    expect(r.headers['anthropic-organization-id']).toBeDefined()
    expect(r.headers['content-length']).toBe(String(r.body.length))
    await p.settled()
  })

  it('passes the openai request id and rate-limit headers intact, and the SDK reads its request id', async () => {
    const r = await postOpenai(p.url, '/w/fid/a/oaihdr/v1/chat/completions', HELLO_OAI)
    expect(r.headers['x-request-id']).toMatch(/^req_fake\d{6}$/)
    expect(r.headers['x-ratelimit-limit-requests']).toBe('10000')
    expect(r.headers['x-ratelimit-remaining-requests']).toBe('9999')
    expect(r.headers['openai-version']).toBe('2020-10-01')
    p.fake.enqueue({ headers: { 'request-id': 'req_sdk_visible' } })
    const client = new Anthropic({ baseURL: `${p.url}/w/fid/a/sdkhdr`, apiKey: 'sk-test', maxRetries: 0 })
    const msg = await client.messages.create({
      model: 'claude-fake-1',
      max_tokens: 8,
      messages: [{ role: 'user', content: 'hi' }],
    })
    expect(msg._request_id).toBe('req_sdk_visible')
    await p.settled()
  })

  /** The same request straight to the fake and through the proxy; ids and timestamps normalized. */
  async function directAndProxied(
    path: string,
    body: string,
    post: typeof postAnthropic,
    agentPath: string,
  ): Promise<{ direct: string; proxied: Buffer }> {
    const fake = path.includes('chat') ? oai : p.fake
    fake.reset()
    const direct = await post(fake.url, path, body)
    fake.reset()
    const proxied = await post(p.url, agentPath + path, body)
    expect(proxied.status).toBe(200)
    expect(proxied.headers['content-type']).toBe(direct.headers['content-type'])
    return { direct: direct.body.toString(), proxied: proxied.body }
  }
  const normalize = (s: string): string =>
    s.replace(/fake\d{6}/g, 'fakeN').replace(/"created":\d+/g, '"created":0')

  it('streams an anthropic SSE answer byte for byte, ping events and comment lines included', async () => {
    const STREAM = HELLO.replace('{', '{"stream":true,')
    const { direct, proxied } = await directAndProxied('/v1/messages', STREAM, postAnthropic, '/w/fid/a/sse')
    expect(direct).toContain('event: ping\ndata: {"type": "ping"}\n\n')
    expect(direct).toContain('\n\n: keep-alive\n\n')
    expect(normalize(proxied.toString())).toBe(normalize(direct))
    await p.settled()
    expect(show('fid', 'sse', 'response.sse').equals(proxied)).toBe(true)
  })

  it('streams an openai SSE answer byte for byte, comment lines and [DONE] included', async () => {
    const STREAM = HELLO_OAI.replace('{', '{"stream":true,')
    const { direct, proxied } = await directAndProxied(
      '/v1/chat/completions',
      STREAM,
      postOpenai,
      '/w/fid/a/osse',
    )
    expect(direct).toContain(': keep-alive\n\n')
    expect(direct).toMatch(/data: \[DONE\]\n\n$/)
    expect(normalize(proxied.toString())).toBe(normalize(direct))
    await p.settled()
    expect(show('fid', 'osse', 'response.sse').equals(proxied)).toBe(true)
  })

  it('streams unbuffered: each event reaches the client as the provider sends it', async () => {
    p.fake.enqueue({ chunkDelayMs: 200, text: 'hi' })
    const STREAM = HELLO.replace('{', '{"stream":true,')
    const r = await postAnthropic(p.url, '/w/fid/a/slow/v1/messages', STREAM)
    expect(r.status).toBe(200)
    const events = r.body.toString().split('\n\n').filter(Boolean)
    expect(events).toHaveLength(8)
    const first = r.chunks[0]
    expect(first?.bytes.toString()).toMatch(/^event: message_start\n.*\n\n$/)
    expect(first?.at).toBeLessThan(r.totalMs - 300)
    expect((r.chunks.at(-1)?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThan(1000)
    expect(r.chunks.length).toBeGreaterThanOrEqual(6)
    await p.settled()
    expect(meta('fid', 'slow').ttfb_ms).toBeLessThan(meta('fid', 'slow').total_ms - 300)
  })

  it('passes a gzip JSON answer through still compressed, while the record and usage are decoded', async () => {
    p.fake.enqueue({ gzip: true })
    const r = await postAnthropic(p.url, '/w/fid/a/gzip/v1/messages', HELLO, { 'accept-encoding': 'gzip' })
    expect(r.status).toBe(200)
    expect(r.headers['content-encoding']).toBe('gzip')
    expect(r.headers['content-length']).toBe(String(r.body.length))
    const plain = zlib.gunzipSync(r.body)
    expect(JSON.parse(plain.toString())).toMatchObject({ type: 'message', stop_reason: 'end_turn' })
    await p.settled()
    expect(show('fid', 'gzip', 'response.json').equals(plain)).toBe(true)
    expect(meta('fid', 'gzip')).toMatchObject({
      status: 200,
      outcome: 'ok',
      stop_reason: 'end_turn',
      usage: { input_tokens: expect.any(Number), output_tokens: expect.any(Number) },
    })
  })

  it('passes a gzip SSE answer through still compressed, while response.sse is the decoded stream', async () => {
    p.fake.enqueue({ gzip: true })
    const STREAM = HELLO.replace('{', '{"stream":true,')
    const r = await postAnthropic(p.url, '/w/fid/a/gzsse/v1/messages', STREAM, { 'accept-encoding': 'gzip' })
    expect(r.headers['content-encoding']).toBe('gzip')
    const plain = zlib.gunzipSync(r.body)
    expect(plain.toString()).toMatch(/^event: message_start/)
    await p.settled()
    expect(show('fid', 'gzsse', 'response.sse').equals(plain)).toBe(true)
    expect(meta('fid', 'gzsse').usage).toMatchObject({ output_tokens: expect.any(Number) })
  })
})

describe('pass-through and count_tokens are never steps', () => {
  it('routes GET /v1/models to the anthropic row with anthropic-version and to the openai row without', async () => {
    await p.settled()
    const before = listTree(p.home)
    const a = await rawRequest(p.url, {
      method: 'GET',
      path: '/v1/models?limit=2',
      headers: { 'anthropic-version': '2023-06-01' },
    })
    expect(a.status).toBe(200)
    expect(JSON.parse(a.body.toString()).data[0]).toMatchObject({ type: 'model', id: 'claude-fake-1' })
    expect(p.fake.received.map((r) => `${r.method} ${r.url}`)).toEqual(['GET /v1/models?limit=2'])
    expect(oai.received).toHaveLength(0)

    const o = await rawRequest(p.url, { method: 'GET', path: '/v1/models' })
    expect(o.status).toBe(200)
    expect(JSON.parse(o.body.toString())).toMatchObject({ object: 'list' })
    expect(oai.received.map((r) => `${r.method} ${r.url}`)).toEqual(['GET /v1/models'])

    const prefixed = await rawRequest(p.url, { method: 'GET', path: '/w/x/a/y/v1/models' })
    expect(prefixed.status).toBe(200)
    expect(oai.received.map((r) => r.url)).toEqual(['/v1/models', '/v1/models'])

    const hello = await rawRequest(p.url, { method: 'HEAD', path: '/api/hello' })
    expect(hello.status).toBe(200)
    expect(p.fake.received.at(-1)).toMatchObject({ method: 'HEAD', url: '/api/hello' })

    const sdk = new Anthropic({ baseURL: p.url, apiKey: 'sk-test', maxRetries: 0 })
    expect((await sdk.models.list()).data.map((m) => m.id)).toEqual(['claude-fake-1', 'claude-fake-2'])

    await p.settled()
    expect(listTree(p.home)).toEqual(before)
  })

  it('answers GET /v1/models?limit=1000 (Claude Code’s model probe) from the provider within 3 s, without a redirect', async () => {
    const started = Date.now()
    const r = await rawRequest(p.url, {
      method: 'GET',
      path: '/v1/models?limit=1000',
      headers: { 'anthropic-version': '2023-06-01', 'x-api-key': 'sk-test' },
    })
    expect(Date.now() - started).toBeLessThan(3000)
    expect(r.status).toBe(200)
    expect(r.headers.location).toBeUndefined()
    expect(p.fake.received.map((x) => x.url)).toEqual(['/v1/models?limit=1000'])
  })

  it('count_tokens gets compose and hold applied and is not recorded', async () => {
    const tool = (name: string) => ({
      name,
      description: `tool ${name}`,
      input_schema: { type: 'object' as const },
    })
    const client = new Anthropic({ baseURL: `${p.url}/w/fid/a/count`, apiKey: 'sk-test', maxRetries: 0 })
    const messages = [{ role: 'user' as const, content: 'count me' }]
    await client.messages.create({
      model: 'claude-fake-1',
      max_tokens: 8,
      messages,
      tools: [tool('a'), tool('b')],
    })
    await p.settled()
    const before = listTree(p.home)
    const count = await client.messages.countTokens({ model: 'claude-fake-1', messages, tools: [tool('a')] })
    expect(count.input_tokens).toBeGreaterThan(0)
    const got = p.fake.received[1]
    expect(got?.url).toBe('/v1/messages/count_tokens')
    const sent = JSON.parse(got?.body.toString() ?? '{}')
    expect(sent.tools.map((t: { name: string }) => t.name)).toEqual(['a', 'b'])
    // The held array is the recorded one, byte for byte.
    const recorded = show('fid', 'count', 'request.json').toString()
    const toolsBytes = (s: string) =>
      s.slice(s.indexOf('"tools":'), s.indexOf(']', s.indexOf('"tools":')) + 1)
    expect(toolsBytes(got?.body.toString() ?? '')).toBe(toolsBytes(recorded))
    await p.settled()
    expect(listTree(p.home)).toEqual(before)
    expect(git(p.repo('fid'), 'rev-list', '--count', 'agents/count').trim()).toBe('2')
  })
})
