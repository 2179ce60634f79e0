/**
 * proxy/record/meta: meta.json built in two halves. Rules: the send half names the step as three
 * digits, records the endpoint and the provider URL with credential query parameters redacted,
 * copies the request headers (never shares the caller's object), and carries `identified` and
 * `harness_tools` only when there is something to say; the answer half keeps the send half,
 * rounds times to 1/100 ms, keeps a null TTFB null, joins repeated response headers and never
 * records `set-cookie`. Both halves are valid against schemas/meta.schema.json.
 */
import type { HoldVerdict } from '../../../proxy/core/hold'
import {
  type Answered,
  answeredMeta,
  headerText,
  recordedResponseHeaders,
  type SendFacts,
  sendMeta,
} from '../../../proxy/record/meta'
import { schemaValidator } from '../../../proxy/store/config/schemas'

const HOLD: HoldVerdict = { applied: true, reason: 'applied', held: ['fs_read'] }

function facts(over: Partial<SendFacts> = {}): SendFacts {
  return {
    workspace: 'proj',
    agent: 'main',
    n: 7,
    dialect: 'openai',
    path: '/v1/chat/completions?api_key=sk-secret&stream=1',
    route: {
      provider: 'gateway',
      url: new URL('https://gw.example/v1/chat/completions?key=AIza-secret&alt=sse'),
      role: 'coder',
      configCommit: 'a'.repeat(40),
      configNote: null,
      plugin: null,
    },
    identified: undefined,
    model: 'gpt-5',
    requestHeaders: { 'content-type': 'application/json', 'user-agent': 'codex' },
    keyingHeaders: {},
    hold: HOLD,
    providerCache: { asked: false, comparedWith: null },
    injected: ['fs_read'],
    harnessTools: [],
    changes: [{ field: 'tools', why: 'appended loaded tools: fs_read' }],
    requestBytes: 1234,
    ...over,
  }
}

const valid = (meta: object): boolean => {
  const validate = schemaValidator('meta')
  const ok = validate(structuredClone(meta))
  if (!ok) throw new Error(JSON.stringify(validate.errors))
  return ok
}

describe('the send half', () => {
  it('records who, where and what was changed, with every credential in a URL redacted', () => {
    const before = Date.now()
    const m = sendMeta(facts())
    expect(m).toMatchObject({
      version: 1,
      workspace: 'proj',
      agent: 'main',
      step: '007',
      dialect: 'openai',
      endpoint: '/v1/chat/completions?api_key=REDACTED&stream=1',
      route: {
        provider: 'gateway',
        url: 'https://gw.example/v1/chat/completions?key=REDACTED&alt=sse',
        model: 'gpt-5',
        role: 'coder',
        config_commit: 'a'.repeat(40),
        config_note: null,
        plugin: null,
      },
      request_headers: { 'content-type': 'application/json', 'user-agent': 'codex' },
      cache_keying_headers: {},
      hold: HOLD,
      injected_tools: ['fs_read'],
      changes: [{ field: 'tools', why: 'appended loaded tools: fs_read' }],
      request_bytes: 1234,
    })
    expect(JSON.stringify(m)).not.toMatch(/secret/)
    const started = Date.parse(m.started_at)
    expect(started).toBeGreaterThanOrEqual(before - 1)
    expect(started).toBeLessThanOrEqual(Date.now())
    expect(m.started_at).toBe(new Date(started).toISOString())
    expect(valid(m)).toBe(true)
  })

  it('leaves out identified and harness_tools when there is nothing to say, and has no answer fields yet', () => {
    const m = sendMeta(facts())
    expect(m).not.toHaveProperty('identified')
    expect(m).not.toHaveProperty('harness_tools')
    for (const k of ['status', 'outcome', 'usage', 'ended_at', 'response_headers'])
      expect(m).not.toHaveProperty(k)
  })

  it('records a plugin move and the tools the harness declared itself when there are some', () => {
    const moved = { plugin: 'router', from_workspace: 'default', from_agent: 'main', why: 'by session' }
    const m = sendMeta(facts({ identified: moved, harnessTools: ['mcp__holdfast__fs_read'], n: 1234 }))
    expect(m.identified).toEqual(moved)
    expect(m.harness_tools).toEqual(['mcp__holdfast__fs_read'])
    expect(m.step).toBe('1234')
    expect(valid(m)).toBe(true)
  })

  it("records whether the request asks for the provider's cache verdict, and the client's tools of a held step", () => {
    const m = sendMeta(
      facts({ providerCache: { asked: true, comparedWith: 'msg_1' }, clientTools: ['Read', 'Edit'] }),
    )
    expect(m.provider_cache).toEqual({ asked: true, compared_with: 'msg_1' })
    expect(m.client_tools).toEqual(['Read', 'Edit'])
    expect(valid(m)).toBe(true)
    expect(sendMeta(facts())).not.toHaveProperty('client_tools')
  })

  it("copies the request headers, so a later change to the caller's object cannot reach the record", () => {
    const headers: Record<string, string> = { accept: '*/*' }
    const m = sendMeta(facts({ requestHeaders: headers }))
    headers.accept = 'changed'
    expect(m.request_headers).toEqual({ accept: '*/*' })
  })
})

describe('the answer half', () => {
  const answered = (over: Partial<Answered> = {}): Answered => ({
    outcome: 'ok',
    status: 200,
    headers: {
      'content-type': 'text/event-stream',
      'set-cookie': ['__cf_bm=abc; path=/', 'other=1'],
      'x-ratelimit-remaining': ['10', '9'],
      'x-absent': undefined,
    },
    ttfbMs: 12.3456,
    totalMs: 1500.004,
    error: null,
    endedAt: '2026-12-02T00:00:01.000Z',
    ...over,
  })

  it('adds times rounded to 1/100 ms, the status and outcome, and the headers without set-cookie', () => {
    const sent = sendMeta(facts())
    const m = answeredMeta(sent, answered())
    expect(m).toEqual({
      ...sent,
      ended_at: '2026-12-02T00:00:01.000Z',
      ttfb_ms: 12.35,
      total_ms: 1500,
      status: 200,
      outcome: 'ok',
      response_headers: { 'content-type': 'text/event-stream', 'x-ratelimit-remaining': '10, 9' },
      error: null,
    })
    expect(JSON.stringify(m)).not.toContain('__cf_bm')
    expect(valid(m)).toBe(true)
  })

  it('keeps a missing first byte as null, ends now when no end is given, and records the error', () => {
    const before = Date.now()
    const error = { code: 'UPSTREAM_UNREACHABLE', message: 'connect ECONNREFUSED 127.0.0.1:9' }
    const m = answeredMeta(
      sendMeta(facts()),
      answered({
        outcome: 'upstream_error',
        status: null,
        headers: {},
        ttfbMs: null,
        endedAt: undefined,
        error,
      }),
    )
    expect(m.ttfb_ms).toBeNull()
    expect(m.status).toBeNull()
    expect(m.response_headers).toEqual({})
    expect(m.error).toEqual(error)
    expect(Date.parse(m.ended_at as string)).toBeGreaterThanOrEqual(before - 1)
    expect(valid(m)).toBe(true)
  })
})

describe('header values', () => {
  it.each<[string | string[] | undefined, string]>([
    ['a', 'a'],
    [['a', 'b'], 'a, b'],
    [[], ''],
    [undefined, ''],
  ])('reads %j as %j', (v, want) => {
    expect(headerText(v)).toBe(want)
  })

  it('drops only set-cookie and undefined values from response headers', () => {
    expect(
      recordedResponseHeaders({
        'set-cookie': 'a=1',
        'request-id': 'req_1',
        'anthropic-ratelimit-tokens-remaining': ['5'],
        gone: undefined,
      }),
    ).toEqual({ 'request-id': 'req_1', 'anthropic-ratelimit-tokens-remaining': '5' })
  })
})
