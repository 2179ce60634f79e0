/**
 * Bad input and faults (DESIGN §4, §5, §12): malformed or oversized requests and bad names are
 * refused in the dialect's envelope and change nothing on disk; provider failures, a client
 * that goes away are each answered honestly and recorded; an unreadable previous record never blocks the agent.
 */
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import { eventually, git, gitBytes, startProxy, type Proxy } from '../../support/harness'
import { damageRecord } from '../../support/repo-checks'
import {
  closedPort,
  listTree,
  postAnthropic,
  postOpenai,
  rawRequest,
  type RawResponse,
} from '../../support/raw-http'

let p: Proxy
let dead: Proxy
/** Upstream timeouts at their 1 s minimum (the default is 10 minutes). */
let impatient: Proxy

beforeAll(async () => {
  p = await startProxy({ config: { limits: { body_bytes: 2048 } } })
  const port = await closedPort()
  dead = await startProxy({
    config: {
      providers: {
        anthropic: { dialect: 'anthropic', base_url: `http://127.0.0.1:${port}` },
        openai: { dialect: 'openai', base_url: `http://127.0.0.1:${port}/v1` },
      },
    },
  })
  impatient = await startProxy({
    config: { timeouts: { upstream_headers_ms: 1000, upstream_body_ms: 1000 } },
  })
})
afterAll(async () => {
  // The fakes go first: should the proxy fail to abort a call, their sockets end it (no hang).
  await Promise.all([p.fake.close(), dead.fake.close(), impatient.fake.close()])
  await Promise.all([p.close(), dead.close(), impatient.close()])
})
beforeEach(() => p.fake.reset())

const HELLO = '{"model":"claude-fake-1","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}'
const HELLO_OAI = '{"model":"gpt-fake-1","messages":[{"role":"user","content":"hi"}]}'
const STREAM =
  '{"model":"claude-fake-1","max_tokens":16,"stream":true,"messages":[{"role":"user","content":"hi"}]}'

const meta = (q: Proxy, ws: string, agent: string, n = '001') =>
  JSON.parse(git(q.repo(ws), 'show', `agents/${agent}:steps/${agent}/${n}/meta.json`))

function expectAnthropicError(r: RawResponse, status: number, type: string): string {
  expect(r.status).toBe(status)
  expect(r.headers['content-type']).toBe('application/json')
  const body = JSON.parse(r.body.toString())
  expect(body).toEqual({ type: 'error', error: { type, message: expect.any(String) } })
  return body.error.message as string
}

function expectOpenaiError(r: RawResponse, status: number, type: string): string {
  expect(r.status).toBe(status)
  expect(r.headers['content-type']).toBe('application/json')
  const body = JSON.parse(r.body.toString())
  expect(body).toEqual({ error: { message: expect.any(String), type, param: null, code: null } })
  return body.error.message as string
}

/** Run `act` and prove that the home is unchanged and the provider saw nothing. */
async function changesNothing(act: () => Promise<void>): Promise<void> {
  await p.settled()
  const before = listTree(p.home)
  await act()
  await p.settled()
  expect(listTree(p.home)).toEqual(before)
  expect(p.fake.received).toHaveLength(0)
}

describe('malformed input is refused in the dialect envelope and changes nothing', () => {
  it.each([
    ['truncated', '{"model":"claude-fake-1","messages":['],
    ['trailing garbage', `${HELLO} x`],
    ['not an object', '[1,2]'],
    ['empty', ''],
  ])('malformed JSON (%s) on /v1/messages is a 400 invalid_request_error', async (_, body) => {
    await changesNothing(async () => {
      const r = await postAnthropic(p.url, '/w/badjson/a/main/v1/messages', body)
      expectAnthropicError(r, 400, 'invalid_request_error')
    })
  })

  it('malformed JSON on /v1/chat/completions is a 400 in the openai envelope', async () => {
    await changesNothing(async () => {
      const r = await postOpenai(p.url, '/w/badjson/a/main/v1/chat/completions', '{"model": gpt}')
      expect(expectOpenaiError(r, 400, 'invalid_request_error')).toMatch(/not valid JSON/)
    })
  })

  it.each([
    [
      'anthropic',
      '/v1/messages',
      '{"model":"claude-fake-1","max_tokens":1,"model":"claude-x","messages":[]}',
    ],
    [
      'anthropic',
      '/v1/messages',
      '{"model":"claude-fake-1","max_tokens":1,"mod\\u0065l":"claude-x","messages":[]}',
    ],
    ['openai', '/v1/chat/completions', '{"messages":[],"model":"gpt-a","messages":[]}'],
    ['openai', '/v1/chat/completions', '{"model":"gpt-a","\\u006dodel":"gpt-b","messages":[]}'],
  ])('a duplicated top-level key (%s %s %s) is a 400 naming it', async (dialect, endpoint, body) => {
    await changesNothing(async () => {
      const url = `/w/dupkey/a/main${endpoint}`
      const message =
        dialect === 'anthropic'
          ? expectAnthropicError(await postAnthropic(p.url, url, body), 400, 'invalid_request_error')
          : expectOpenaiError(await postOpenai(p.url, url, body), 400, 'invalid_request_error')
      expect(message).toMatch(/model|messages/)
    })
  })

  it('a body over the configured limit is a 413, whether content-length announces it or not', async () => {
    const big = JSON.stringify({ model: 'claude-fake-1', max_tokens: 1, messages: [], pad: 'x'.repeat(4096) })
    await changesNothing(async () => {
      const declared = await postAnthropic(p.url, '/w/big/a/main/v1/messages', big)
      expectAnthropicError(declared, 413, 'request_too_large')
      // No content-length: the limit must be enforced while reading.
      const chunked = await rawRequest(p.url, {
        path: '/w/big/a/main/v1/chat/completions',
        body: big,
        chunked: true,
        headers: { 'content-type': 'application/json' },
      })
      expectOpenaiError(chunked, 413, 'request_too_large')
    })
  })

  it('a client that goes away mid-upload sends and records nothing, even when what arrived parses', async () => {
    await changesNothing(async () => {
      const u = new URL(p.url)
      const req = http.request({
        host: u.hostname,
        port: u.port,
        method: 'POST',
        path: '/w/upload/a/main/v1/messages',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(HELLO) + 64 },
        agent: false,
      })
      req.on('error', () => undefined)
      req.write(HELLO)
      await new Promise((r) => setTimeout(r, 50))
      req.destroy()
      await new Promise((r) => setTimeout(r, 50))
    })
  })

  it('a body just under the limit is served', async () => {
    const body = JSON.stringify({
      model: 'claude-fake-1',
      max_tokens: 1,
      messages: [],
      pad: 'x'.repeat(1900),
    })
    expect(Buffer.byteLength(body)).toBeLessThan(2048)
    const r = await postAnthropic(p.url, '/w/big/a/under/v1/messages', body)
    expect(r.status).toBe(200)
    await p.settled()
  })

  it.each([
    ['a ".." workspace in the prefix', '/w/../a/main/v1/messages', {}],
    ['an escaped ".." workspace in the prefix', '/w/%2e%2e/a/main/v1/messages', {}],
    ['an agent with a space in the prefix', '/w/names/a/a%20b/v1/messages', {}],
    ['an agent with an escaped slash in the prefix', '/w/names/a/a%2Fb/v1/messages', {}],
    ['an "x.lock" agent in the prefix', '/w/names/a/x.lock/v1/messages', {}],
    ['a ".." agent header', '/v1/messages', { 'x-holdfast-agent': '..' }],
    ['an agent header with a space', '/v1/messages', { 'x-holdfast-agent': 'a b' }],
    ['an "x.lock" agent header', '/v1/messages', { 'x-holdfast-agent': 'x.lock' }],
    ['an "x.lock" workspace header', '/v1/messages', { 'x-holdfast-workspace': 'x.lock' }],
  ])('%s is a 400 and writes nothing', async (_, url, headers) => {
    await changesNothing(async () => {
      const r = await postAnthropic(p.url, url, HELLO, headers)
      expect(expectAnthropicError(r, 400, 'invalid_request_error')).toMatch(/name .* is not usable/)
    })
  })

  it('an invalid name on the openai endpoint is refused in the openai envelope', async () => {
    await changesNothing(async () => {
      const r = await postOpenai(p.url, '/w/names/a/x.lock/v1/chat/completions', HELLO_OAI)
      expectOpenaiError(r, 400, 'invalid_request_error')
    })
  })
})

describe('provider failures are answered honestly and recorded', () => {
  it('an unreachable provider is a 502 in the envelope, and the step is recorded and committed', async () => {
    const a = await postAnthropic(dead.url, '/v1/messages', HELLO)
    expect(expectAnthropicError(a, 502, 'api_error')).toMatch(/could not be reached/)
    const o = await postOpenai(dead.url, '/v1/chat/completions', HELLO_OAI, { 'x-holdfast-agent': 'oai' })
    expectOpenaiError(o, 502, 'api_error')
    await dead.settled()
    for (const agent of ['main', 'oai']) {
      expect(meta(dead, 'default', agent)).toMatchObject({
        status: null,
        outcome: 'unreachable',
        response_file: null,
        error: { code: 'UPSTREAM_UNREACHABLE', message: expect.stringContaining('could not be reached') },
      })
    }
    const recorded = gitBytes(dead.repo(), 'show', 'agents/main:steps/main/001/request.json')
    expect(recorded.toString()).toBe(HELLO)
  })

  it('an unreachable provider on the pass-through path is a 502 in the envelope of the row it was for', async () => {
    const a = await rawRequest(dead.url, {
      method: 'GET',
      path: '/v1/models',
      headers: { 'anthropic-version': '2023-06-01' },
    })
    expect(expectAnthropicError(a, 502, 'api_error')).toMatch(
      /provider row "anthropic" .* could not be reached/,
    )
    const o = await rawRequest(dead.url, { method: 'GET', path: '/v1/models' })
    expect(expectOpenaiError(o, 502, 'api_error')).toMatch(/provider row "openai" .* could not be reached/)
  })

  it('a provider that sends no headers within the configured timeout is a 502, recorded', async () => {
    impatient.fake.enqueue({ delayMs: 4000 })
    const r = await postAnthropic(impatient.url, '/v1/messages', HELLO)
    expectAnthropicError(r, 502, 'api_error')
    await impatient.settled()
    expect(meta(impatient, 'default', 'main')).toMatchObject({
      status: null,
      outcome: 'unreachable',
      error: { code: 'UPSTREAM_UNREACHABLE' },
    })
  })

  it('a stream that stalls beyond the configured body timeout gets the client socket destroyed', async () => {
    impatient.fake.enqueue({ chunkDelayMs: 4000 })
    await expect(postAnthropic(impatient.url, '/w/default/a/stall/v1/messages', STREAM)).rejects.toThrow()
    await impatient.settled()
    expect(meta(impatient, 'default', 'stall')).toMatchObject({
      status: 200,
      outcome: 'upstream_error',
      error: { code: 'UPSTREAM_FAILED' },
    })
  })

  it('a 429 from the provider reaches the client byte for byte with its retry headers, and is recorded', async () => {
    const body =
      '{"type":"error",  "error":{"type":"rate_limit_error","message":"slow down"}, "request_id":"r1"}'
    p.fake.enqueue({ status: 429, body, headers: { 'retry-after': '7', 'x-should-retry': 'true' } })
    const r = await postAnthropic(p.url, '/w/up/a/rl/v1/messages', HELLO)
    expect(r.status).toBe(429)
    expect(r.body.toString()).toBe(body)
    expect(r.headers['retry-after']).toBe('7')
    expect(r.headers['x-should-retry']).toBe('true')
    expect(r.headers['content-type']).toBe('application/json')
    expect(r.headers['x-holdfast-error']).toBeUndefined()
    await p.settled()
    expect(meta(p, 'up', 'rl')).toMatchObject({
      status: 429,
      outcome: 'upstream_error',
      response_file: 'response.json',
      response_headers: { 'retry-after': '7', 'x-should-retry': 'true' },
    })
    expect(gitBytes(p.repo('up'), 'show', 'agents/rl:steps/rl/001/response.json').toString()).toBe(body)
  })

  it("a 500 from the provider reaches the openai client byte for byte in the provider's own envelope", async () => {
    p.fake.enqueue({ status: 500, errorMessage: 'the fake broke' })
    const r = await postOpenai(p.url, '/w/up/a/five/v1/chat/completions', HELLO_OAI)
    expect(r.status).toBe(500)
    expect(JSON.parse(r.body.toString())).toEqual({
      error: { message: 'the fake broke', type: 'server_error', param: null, code: null },
    })
    expect(r.headers['x-request-id']).toMatch(/^req_fake\d+$/)
    await p.settled()
    expect(meta(p, 'up', 'five')).toMatchObject({ status: 500, outcome: 'upstream_error' })
    expect(gitBytes(p.repo('up'), 'show', 'agents/five:steps/five/001/response.json').equals(r.body)).toBe(
      true,
    )
  })
})

/** Send `body` and destroy the request once `when` resolves; resolves with the bytes seen by then. */
function abortWhen(url: string, body: string, when: (got: Buffer[]) => Promise<void>): Promise<Buffer[]> {
  const u = new URL(url)
  return new Promise((resolve, reject) => {
    const got: Buffer[] = []
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        method: 'POST',
        path: u.pathname,
        headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
        agent: false,
      },
      (res) => {
        res.on('data', (c: Buffer) => got.push(c))
        res.on('error', () => undefined)
      },
    )
    req.on('error', () => undefined)
    req.end(body)
    when(got).then(() => {
      req.destroy()
      resolve(got)
    }, reject)
  })
}

describe('a client that goes away aborts the provider call', () => {
  it('mid-stream: the upstream request is aborted and the step is recorded as aborted', async () => {
    p.fake.enqueue({ chunkDelayMs: 300 })
    const got = await abortWhen(`${p.url}/w/gone/a/mid/v1/messages`, STREAM, (g) =>
      eventually(() => g.length > 0, 3000, 'the first event'),
    )
    expect(Buffer.concat(got).toString()).toMatch(/^event: message_start/)
    await eventually(() => p.fake.aborted === 1, 3000, 'the fake to see the upstream abort')
    await p.settled()
    expect(meta(p, 'gone', 'mid')).toMatchObject({
      status: 200,
      outcome: 'aborted',
      error: { code: 'CLIENT_GONE' },
    })
    const sse = git(p.repo('gone'), 'show', 'agents/mid:steps/mid/001/response.sse')
    expect(sse).toMatch(/^event: message_start/)
    expect(sse).not.toContain('message_stop')
  })

  it('before the provider answers: the hanging upstream request is aborted too', async () => {
    p.fake.enqueue({ hang: true })
    await abortWhen(`${p.url}/w/gone/a/hang/v1/messages`, HELLO, () =>
      eventually(() => p.fake.received.length === 1, 3000, 'the request to reach the fake'),
    )
    await eventually(() => p.fake.aborted === 1, 3000, 'the fake to see the upstream abort')
    await p.settled()
    expect(meta(p, 'gone', 'hang')).toMatchObject({
      status: null,
      outcome: 'aborted',
      error: { code: 'CLIENT_GONE' },
    })
  })
})

describe('a client that goes away from a pass-through request', () => {
  it('aborts the provider call too (GET and POST)', async () => {
    p.fake.enqueue({ hang: true, path: '/v1/models' })
    p.fake.enqueue({ hang: true, path: '/v1/embeddings' })
    const u = new URL(p.url)
    for (const [method, path_, body] of [
      ['GET', '/v1/models', undefined],
      ['POST', '/v1/embeddings', '{"model":"text-embedding-3-small","input":"hi"}'],
    ] as const) {
      const seen = p.fake.received.length
      const req = http.request({ host: u.hostname, port: u.port, method, path: path_, agent: false })
      req.on('error', () => undefined)
      if (body) req.setHeader('content-type', 'application/json')
      req.end(body)
      await eventually(() => p.fake.received.length === seen + 1, 3000, `${path_} to reach the fake`)
      req.destroy()
    }
    await eventually(() => p.fake.aborted === 2, 3000, 'the fake to see both upstream calls aborted')
  })
})

describe('an upstream that fails mid-answer', () => {
  it.each([
    ['a stream', STREAM, 'response.sse'],
    ['a JSON answer', HELLO, 'response.json'],
  ])('gets the client socket destroyed (%s), never a clean end, and is recorded', async (_, body, file) => {
    p.fake.enqueue({ failMidStream: true })
    const agent = file === 'response.sse' ? 'sse' : 'json'
    await expect(postAnthropic(p.url, `/w/fail/a/${agent}/v1/messages`, body)).rejects.toThrow()
    await p.settled()
    expect(meta(p, 'fail', agent)).toMatchObject({
      status: 200,
      outcome: 'upstream_error',
      response_file: file,
      error: { code: 'UPSTREAM_FAILED' },
    })
  })
})

describe('an unreadable previous record', () => {
  const damages: Record<string, string> = {
    'invalid JSON': '{"model": "claude-fake-1", "messages": [ -- broken',
    'a JSON array': '[{"model": "claude-fake-1"}, "not a request at all"]',
    'a directory': 'directory',
  }

  /** Step 1, then damage its committed request.json, then step 2: step 2 is sent as composed; returns its meta. */
  async function stepAfterDamage(what: string, agent: string): Promise<Record<string, unknown>> {
    const r1 = await postAnthropic(p.url, `/w/fault/a/${agent}/v1/messages`, HELLO)
    expect(r1.status).toBe(200)
    await p.settled()
    damageRecord(path.join(p.home, 'workspaces', 'fault', 'repo.git'), agent, '001', damages[what] as string)
    p.server.ctx.records.previousRecords.forget(`fault\0${agent}`) // read from the record, as after a restart
    const r2 = await postAnthropic(p.url, `/w/fault/a/${agent}/v1/messages`, HELLO)
    expect(r2.status).toBe(200)
    expect(p.fake.received).toHaveLength(2)
    expect(p.fake.received[1]?.body.toString()).toBe(HELLO) // as composed: unchanged
    await p.settled()
    return meta(p, 'fault', agent, '002') as Record<string, unknown>
  }

  // DESIGN §13 (amending §6): a record that cannot be read back never blocks the agent.
  it.each(['invalid JSON', 'a JSON array', 'a directory'])(
    '(%s) sends the next step as composed with the hold verdict record-fault',
    async (what) => {
      const m = await stepAfterDamage(what, what.replace(/\W/g, ''))
      expect(m.hold).toMatchObject({ applied: false, reason: 'record-fault', held: [] })
      expect((m.hold as { detail: string }).detail).toMatch(
        /^the previous step's request\.json cannot be read back as a request: /,
      )
    },
  )
})

describe('a journal that fails between the record and the send', () => {
  it('refuses the step with RECORD_WRITE_FAILED when its SENT frame cannot be written: nothing is sent, the record says not_sent', async () => {
    const real = fs.writevSync
    const spy = jest.spyOn(fs, 'writevSync').mockImplementation((fd, buffers, position) => {
      // The send half goes in; the SENT frame (type 2, no payload) right after it meets a full disk.
      if (buffers.length === 1 && (buffers[0] as Buffer).length === 16 && (buffers[0] as Buffer)[0] === 2)
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })
      return real(fd, buffers, position)
    })
    let r: RawResponse
    try {
      r = await postAnthropic(p.url, '/w/fault/a/unsent/v1/messages', HELLO)
    } finally {
      spy.mockRestore()
    }
    expect(expectAnthropicError(r, 500, 'api_error')).toBe(
      'the record of step 001 could not be written; nothing was sent',
    )
    expect(r.headers['x-holdfast-error']).toBe('RECORD_WRITE_FAILED')
    await p.settled()
    expect(p.fake.received).toHaveLength(0)
    expect(meta(p, 'fault', 'unsent')).toMatchObject({
      outcome: 'not_sent',
      status: null,
      error: { code: 'RECORD_WRITE_FAILED' },
    })
  })
})
