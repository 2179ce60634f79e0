/**
 * proxy/record/span: a finished meta as a GenAI span's facts — every input token counted, the
 * cache-write name by the semconv asked, the trace context and the conversation id only as the
 * client sent them, an error named, and no content unless asked.
 */
import type { StepMeta } from '../../../generated/meta'
import {
  conversationId,
  parseTraceparent,
  requestParams,
  spanFacts,
  type SpanAsk,
} from '../../../proxy/record/span'

const meta = (over: Partial<StepMeta> = {}): StepMeta =>
  ({
    version: 1,
    workspace: 'w',
    agent: 'a',
    step: '007',
    dialect: 'anthropic',
    endpoint: '/v1/messages',
    started_at: '2030-01-01T00:00:00.000Z',
    ended_at: '2030-01-01T00:00:02.000Z',
    route: { provider: 'anthropic', url: 'https://api.anthropic.com/v1/messages', model: 'claude-x' },
    request_headers: {},
    cache_keying_headers: {},
    hold: { applied: true, reason: 'held', held: ['Bash'] },
    injected_tools: [],
    changes: [],
    request_bytes: 10,
    outcome: 'ok',
    status: 200,
    usage: { input_tokens: 3, output_tokens: 5, cache_read_tokens: 100, cache_write_tokens: 20 },
    stop_reason: 'end_turn',
    ...over,
  }) as StepMeta

const ask = (over: Partial<SpanAsk> = {}): SpanAsk => ({
  capture: false,
  semconv: 'stable',
  acceptedAt: Date.parse('2030-01-01T00:00:00.000Z') - 5,
  request: { stream: false },
  ...over,
})

test('input tokens count the cached reads and writes; the write count has one name, by semconv', () => {
  const stable = spanFacts(meta(), 'anthropic', ask()).attributes
  expect(stable['gen_ai.usage.input_tokens']).toBe(123)
  expect(stable['gen_ai.usage.cache_read.input_tokens']).toBe(100)
  expect(stable['gen_ai.usage.cache_creation.input_tokens']).toBe(20)
  expect(stable['gen_ai.usage.cache_write.input_tokens']).toBeUndefined()
  const latest = spanFacts(meta(), 'anthropic', ask({ semconv: 'latest' })).attributes
  expect(latest['gen_ai.usage.cache_write.input_tokens']).toBe(20)
  expect(latest['gen_ai.usage.cache_creation.input_tokens']).toBeUndefined()
})

test('the span starts at the accept time, ends at ended_at, and names the upstream and the hold', () => {
  const f = spanFacts(meta(), 'anthropic', ask())
  expect(f.name).toBe('chat claude-x')
  expect(f.endMs - f.startMs).toBe(2005)
  expect(f.attributes).toMatchObject({
    'server.address': 'api.anthropic.com',
    'server.port': 443,
    'holdfast.hold': 'held',
    'holdfast.hold.dropped': ['Bash'],
    'holdfast.step': '007',
  })
  expect(f.error).toBeNull()
})

test('a failed step names its error type: the meta code, else the status of a provider error', () => {
  const coded = spanFacts(
    meta({ outcome: 'unreachable', error: { code: 'UPSTREAM_UNREACHABLE', message: 'down' } }),
    'anthropic',
    ask(),
  )
  expect(coded.attributes['error.type']).toBe('UPSTREAM_UNREACHABLE')
  expect(coded.error).toBe('down')
  const status = spanFacts(meta({ outcome: 'upstream_error', status: 429, error: null }), 'anthropic', ask())
  expect(status.attributes['error.type']).toBe('429')
})

test('a valid traceparent is the parent; an invalid one is ignored', () => {
  expect(parseTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', 'a=b')).toEqual({
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    spanId: '00f067aa0ba902b7',
    flags: 1,
    tracestate: 'a=b',
  })
  expect(parseTraceparent('00-00000000000000000000000000000000-00f067aa0ba902b7-01')).toBeNull()
  expect(parseTraceparent('ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')).toBeNull()
  expect(parseTraceparent('garbage')).toBeNull()
  expect(parseTraceparent(undefined)).toBeNull()
})

test('the conversation id is only one a client sent', () => {
  expect(conversationId({})).toBeUndefined()
  expect(conversationId({ 'x-claude-code-session-id': 's1' })).toBe('s1')
  expect(conversationId({ session_id: 'codex' })).toBe('codex')
  expect(conversationId({ 'x-codex-turn-metadata': '{"thread_id":"t9"}' })).toBe('t9')
})

test('request parameters are taken only when sent', () => {
  expect(requestParams({ model: 'm' })).toEqual({ stream: false })
  expect(requestParams({ max_completion_tokens: 9, temperature: 0, top_p: 1, stream: true })).toEqual({
    max_tokens: 9,
    temperature: 0,
    top_p: 1,
    stream: true,
  })
})

test('content goes on the span only when capture is asked', () => {
  const content = {
    request: { system: 'be terse', messages: [{ role: 'user', content: 'secret' }] },
    reply: { turn: [], text: 'answer', toolCalls: [{ id: 't1', name: 'Bash' }] },
  }
  const off = spanFacts(meta(), 'anthropic', ask(), content).attributes
  expect(JSON.stringify(off)).not.toContain('secret')
  const on = spanFacts(meta(), 'anthropic', ask({ capture: true }), content).attributes
  expect(JSON.parse(on['gen_ai.input.messages'] as string)).toEqual(content.request.messages)
  expect(on['gen_ai.system_instructions']).toBe('"be terse"')
  expect(JSON.parse(on['gen_ai.output.messages'] as string)).toEqual([
    {
      role: 'assistant',
      parts: [
        { type: 'text', content: 'answer' },
        { type: 'tool_call', id: 't1', name: 'Bash' },
      ],
      finish_reason: 'end_turn',
    },
  ])
})
