/**
 * proxy/dialects/openai (the request side of Chat Completions), on a realistic agent request: a
 * system and a developer message, a user turn, an assistant turn of tool calls with null content,
 * its tool results, function and custom tools. Rules: the system part is the leading
 * system/developer messages and the transcript is what follows it (a later system message is
 * transcript); no header keys the cache; the output limit is `max_completion_tokens`, else the
 * legacy `max_tokens`; a tool names itself by `function.name`, `custom.name` or a bare `name`,
 * and a tool that names nothing is refused; rows drop the incoming `/v1` (their base URL has it)
 * and send the key as a bearer token. (Facets on hand-made bodies, tool format, tool names and the
 * error envelope: dialects/index.test.)
 */
import type { JsonObject } from '../../../../proxy/core/json'
import { openai, openaiRows } from '../../../../proxy/dialects/openai'

const SYSTEM = { role: 'system', content: 'You are a coding agent.' }
const DEVELOPER = {
  role: 'developer',
  content: [
    { type: 'text', text: 'Use the tools.' },
    { type: 'text', text: 'Be brief.' },
  ],
}
const USER = { role: 'user', content: [{ type: 'text', text: 'List the files.' }] }
const CALLS: JsonObject = {
  role: 'assistant',
  content: null,
  tool_calls: [
    { id: 'call_1', type: 'function', function: { name: 'shell', arguments: '{"cmd":"ls"}' } },
    { id: 'call_2', type: 'custom', custom: { name: 'apply_patch', input: '*** Begin Patch' } },
  ],
}
const RESULT = { role: 'tool', tool_call_id: 'call_1', content: 'a.ts\nb.ts' }
const LATE_SYSTEM = { role: 'system', content: 'Context is getting long.' }
const BODY: JsonObject = {
  model: 'gpt-5',
  messages: [SYSTEM, DEVELOPER, USER, CALLS, RESULT, LATE_SYSTEM, { role: 'user', content: 'Thanks.' }],
  tools: [
    {
      type: 'function',
      function: {
        name: 'shell',
        description: 'Runs a command.',
        parameters: { type: 'object' },
        strict: true,
      },
    },
    { type: 'custom', custom: { name: 'apply_patch', format: { type: 'grammar' } } },
  ],
  tool_choice: 'auto',
  parallel_tool_calls: true,
  stream: true,
  stream_options: { include_usage: true },
  prompt_cache_key: 'session-1',
  max_completion_tokens: 4096,
  reasoning_effort: 'low',
}

describe('shape check', () => {
  it('accepts a realistic agent request, a string content, a null content and unread fields of any type', () => {
    expect(openai.checkShape(BODY)).toBeUndefined()
    expect(
      openai.checkShape({
        model: 'gpt-4o',
        messages: [{ role: 'user', content: 'hi' }],
        tool_choice: { type: 'function', function: { name: 'f' } },
      }),
    ).toBeUndefined()
    expect(
      openai.checkShape({ messages: [], response_format: 5, n: 'x', logit_bias: [] } as JsonObject),
    ).toBeUndefined()
  })

  it.each<[object, string]>([
    [{ model: null }, 'model must be a string'],
    [{ messages: 'hi' }, 'messages must be an array of message objects'],
    [
      { messages: [{ role: 'user', content: 1 }] },
      'messages[0].content must be a string, an array of content parts, or null',
    ],
    [
      { messages: [{ role: 'user', content: [{ type: 'text', text: null }] }] },
      'messages[0].content[0].text must be a string',
    ],
    [
      { messages: [{ role: 'assistant', tool_calls: {} }] },
      'messages[0].tool_calls must be an array of tool calls',
    ],
    [
      { messages: [{ role: 'assistant', tool_calls: [{ type: 'function', function: { name: 5 } }] }] },
      'messages[0].tool_calls[0].function.name must be a string',
    ],
    [{ messages: [{ role: 'user', name: 3, content: 'x' }] }, 'messages[0].name must be a string'],
    [
      { tools: [{ type: 'function', function: { description: 'nameless' } }] },
      'tools[0] must name its tool (function.name)',
    ],
    [{ tools: [{ type: 'function', function: { name: 7 } }] }, 'tools[0].function.name must be a string'],
    [{ tools: [{ type: 'custom', custom: 'apply_patch' }] }, 'tools[0].custom must be an object'],
    [{ tool_choice: 1 }, 'tool_choice must be a string or an object'],
    [{ parallel_tool_calls: 'yes' }, 'parallel_tool_calls must be true or false'],
    [{ stream_options: true }, 'stream_options must be an object'],
    [{ prompt_cache_key: 1 }, 'prompt_cache_key must be a string'],
    [{ max_tokens: '10' }, 'max_tokens must be a number'],
    [{ max_completion_tokens: null }, 'max_completion_tokens must be a number'],
  ])('refuses %j naming the field: %s', (body, want) => {
    expect(openai.checkShape(body as JsonObject)).toBe(want)
  })
})

describe('the transcript', () => {
  it('is the messages after the leading system and developer ones; a later system message belongs to it', () => {
    const all = BODY.messages as JsonObject[]
    expect(openai.transcriptField).toBe('messages')
    expect(openai.messages(BODY)).toBe(all)
    const transcript = openai.transcript(BODY)
    expect(transcript).toEqual(all.slice(2))
    expect(transcript[0]).toBe(USER)
    expect(transcript.map((m) => openai.roleOf(m))).toEqual(['user', 'assistant', 'tool', 'system', 'user'])
    expect(openai.transcript({ messages: [SYSTEM] })).toEqual([])
    expect(openai.transcript({})).toEqual([])
  })

  it('reads the system text from the leading system messages only: parts joined by newlines, messages run together', () => {
    expect(openai.systemText(BODY)).toBe('You are a coding agent.Use the tools.\nBe brief.')
    expect(openai.systemText({ messages: [USER, LATE_SYSTEM] })).toBe('')
  })

  it("reads an entry's text, and none from an assistant turn of tool calls", () => {
    expect(openai.textOf(USER)).toBe('List the files.')
    expect(openai.textOf(CALLS)).toBe('')
    expect(openai.textOf(RESULT)).toBe('a.ts\nb.ts')
    expect(openai.textOf(null)).toBe('')
  })

  it('lists the function and custom tools the assistant called', () => {
    expect(openai.calledToolNames(BODY)).toEqual(['shell', 'apply_patch'])
  })
})

describe('facets and keying', () => {
  it('takes the system messages, the user turn as the head, and tool_choice and parallel_tool_calls as keys', () => {
    const f = openai.facets(BODY, { 'anthropic-beta': 'ignored' })
    expect(f.model).toBe('gpt-5')
    expect(f.system).toEqual([SYSTEM, DEVELOPER])
    expect(f.head).toBe(USER.content)
    expect(f.tools).toBe(BODY.tools)
    expect(f.keying).toEqual({ tool_choice: 'auto', parallel_tool_calls: true })
  })

  it('keys the cache on no header at all', () => {
    expect(
      openai.keyingHeaders({ 'anthropic-beta': 'x', 'openai-beta': 'y', authorization: 'Bearer k' }),
    ).toEqual({})
  })

  it('counts no breakpoints even where a client put a marker', () => {
    expect(
      openai.breakpoints({
        ...BODY,
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'x', cache_control: { type: 'ephemeral' } }] },
        ],
      }),
    ).toBe(0)
  })
})

describe('the output limit and the cache key', () => {
  it.each<[object, unknown]>([
    [{ max_completion_tokens: 4096 }, 4096],
    [{ max_tokens: 1000 }, 1000],
    [{ max_completion_tokens: 4096, max_tokens: 1000 }, 4096],
    [{ max_completion_tokens: null, max_tokens: 1000 }, 1000],
    [{}, undefined],
  ])('reads %j as the limit %j', (body, want) => {
    expect(openai.clientMaxTokens(body as JsonObject)).toBe(want)
  })

  it('sets a limit in max_completion_tokens and a per-agent cache key in prompt_cache_key', () => {
    expect(openai.maxTokensField).toBe('max_completion_tokens')
    expect(openai.promptCacheKeyField).toBe('prompt_cache_key')
  })
})

describe('the openai rows', () => {
  it.each([
    ['https://api.openai.com/v1', '/v1/chat/completions', 'https://api.openai.com/v1/chat/completions'],
    [
      'https://api.openai.com/v1/',
      '/v1/chat/completions?x=1',
      'https://api.openai.com/v1/chat/completions?x=1',
    ],
    ['https://openrouter.ai/api/v1', '/v1/models', 'https://openrouter.ai/api/v1/models'],
    ['http://127.0.0.1:9/v1', '/v1', 'http://127.0.0.1:9/v1'],
    ['http://127.0.0.1:9/v1', '/v1?a=b', 'http://127.0.0.1:9/v1?a=b'],
    ['http://127.0.0.1:9/v1', '/v1beta/models', 'http://127.0.0.1:9/v1/v1beta/models'],
    ['http://127.0.0.1:9/v1', '/health', 'http://127.0.0.1:9/v1/health'],
  ])('sends %s + %s to %s', (base, incoming, want) => {
    expect(openaiRows.upstreamUrl(base, incoming).href).toBe(want)
  })

  it('sends a row key as a bearer token, prices as openai, and adds no header of its own', () => {
    expect(openai.rows).toBe(openaiRows)
    expect(openaiRows.authHeaders('sk-1')).toEqual({ authorization: 'Bearer sk-1' })
    expect(openaiRows.priceProvider).toBe('openai')
    expect(openai.requiredHeaders).toEqual({})
    expect(openai.endpoint).toBe('/v1/chat/completions')
    expect(openai.countTokensEndpoint).toBeUndefined()
  })
})
