import type { JsonObject } from '../../../proxy/core/json'
import { anthropic, dialectByName, openai } from '../../../proxy/dialects'
import { presentedTool } from '../../../proxy/core/loaded-set'

const entry = {
  client: 'fs',
  tool: {
    name: 'read',
    description: 'Reads a file.',
    input_schema: { type: 'object', properties: { p: { type: 'string' } } },
  },
}

describe('anthropic facets', () => {
  const body: JsonObject = {
    model: 'claude-x',
    system: 'Be brief.',
    messages: [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: [{ type: 'tool_use', id: '1', name: 'Read', input: {} }] },
    ],
    tools: [{ name: 'Read' }],
    tool_choice: { type: 'auto' },
    thinking: { type: 'enabled', budget_tokens: 1024 },
  }

  it('reads model, system as blocks, the first message as blocks, tools and the keying fields', () => {
    expect(anthropic.facets(body, { 'anthropic-beta': 'b1' })).toEqual({
      model: 'claude-x',
      system: [{ type: 'text', text: 'Be brief.' }],
      head: [{ type: 'text', text: 'hi' }],
      tools: [{ name: 'Read' }],
      keying: {
        tool_choice: { type: 'auto' },
        thinking: { type: 'enabled', budget_tokens: 1024 },
        'header:anthropic-beta': 'b1',
      },
    })
  })

  it('keeps block content and system arrays as they are, and reads absent parts as undefined', () => {
    const blocks = [{ type: 'text', text: 'a', cache_control: { type: 'ephemeral' } }]
    const f = anthropic.facets(
      { model: 'm', system: blocks, messages: [{ role: 'user', content: blocks }] },
      {},
    )
    expect(f.system).toBe(blocks)
    expect(f.head).toBe(blocks)
    const empty = anthropic.facets({}, {})
    expect([empty.model, empty.system, empty.head, empty.tools]).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ])
    expect(empty.keying).toEqual({
      tool_choice: undefined,
      thinking: undefined,
      'header:anthropic-beta': undefined,
    })
  })

  it('reads a tools value that is not an array as no tools', () => {
    expect(anthropic.facets({ tools: { name: 'x' } }, {}).tools).toBeUndefined()
  })
})

describe('openai facets', () => {
  it('takes the leading system and developer messages as the system and the next message as the head', () => {
    const sys = [
      { role: 'system', content: 'S' },
      { role: 'developer', content: [{ type: 'text', text: 'D' }] },
    ]
    const body: JsonObject = {
      model: 'gpt-x',
      messages: [...sys, { role: 'user', content: 'hi' }, { role: 'system', content: 'late' }],
      tool_choice: 'auto',
      parallel_tool_calls: false,
    }
    expect(openai.facets(body, { 'anthropic-beta': 'ignored' })).toEqual({
      model: 'gpt-x',
      system: sys,
      head: [{ type: 'text', text: 'hi' }],
      tools: undefined,
      keying: { tool_choice: 'auto', parallel_tool_calls: false },
    })
  })

  it('reads no system messages as an empty system, a null content as no blocks, no messages as no head', () => {
    const f = openai.facets({ messages: [{ role: 'assistant', content: null, tool_calls: [] }] }, {})
    expect(f.system).toEqual([])
    expect(f.head).toEqual([])
    expect(openai.facets({ messages: [{ role: 'system', content: 'S' }] }, {}).head).toBeUndefined()
    expect(openai.facets({}, {}).head).toBeUndefined()
  })
})

describe('tools in each dialect', () => {
  it('presents a loaded tool under its presented name in the dialect format', () => {
    expect(anthropic.tool(presentedTool(entry))).toEqual({
      name: 'fs_read',
      description: 'Reads a file.',
      input_schema: entry.tool.input_schema,
    })
    expect(openai.tool(presentedTool(entry))).toEqual({
      type: 'function',
      function: { name: 'fs_read', description: 'Reads a file.', parameters: entry.tool.input_schema },
    })
  })

  it('names a tool element by its declared name, or not at all', () => {
    expect(anthropic.toolName({ type: 'web_search_20250305', name: 'web_search' })).toBe('web_search')
    expect(anthropic.toolName({ type: 'x' })).toBeUndefined()
    expect(anthropic.toolName('Read')).toBeUndefined()
    expect(openai.toolName({ type: 'function', function: { name: 'f' } })).toBe('f')
    expect(openai.toolName({ type: 'custom', custom: { name: 'c' } })).toBe('c')
    expect(openai.toolName({ type: 'custom', name: 'n' })).toBe('n')
    expect(openai.toolName({ type: 'function' })).toBeUndefined()
  })

  it('declares a closure tool with the given description and an open object schema', () => {
    expect(
      anthropic.tool({ name: 'fs_read', description: 'gone', input_schema: { type: 'object' } }),
    ).toEqual({
      name: 'fs_read',
      description: 'gone',
      input_schema: { type: 'object' },
    })
    expect(openai.tool({ name: 'fs_read', description: 'gone', input_schema: { type: 'object' } })).toEqual({
      type: 'function',
      function: { name: 'fs_read', description: 'gone', parameters: { type: 'object' } },
    })
  })

  it('lists the tools the assistant called, first seen first, once each', () => {
    const a: JsonObject = {
      messages: [
        { role: 'user', content: [{ type: 'tool_use', name: 'NotAssistant' }] },
        { role: 'assistant', content: 'text only' },
        {
          role: 'assistant',
          content: [
            { type: 'server_tool_use', name: 'web_search' },
            { type: 'tool_use', name: 'B' },
            { type: 'tool_use', name: 'A' },
          ],
        },
        { role: 'assistant', content: [{ type: 'tool_use', name: 'B' }] },
      ],
    }
    expect(anthropic.calledToolNames(a)).toEqual(['B', 'A'])
    const o: JsonObject = {
      messages: [
        { role: 'user', content: 'go' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { type: 'function', function: { name: 'g', arguments: '{}' } },
            { type: 'custom', custom: { name: 'c', input: '' } },
          ],
        },
        { role: 'assistant', tool_calls: [{ type: 'function', function: { name: 'g', arguments: '{}' } }] },
      ],
    }
    expect(openai.calledToolNames(o)).toEqual(['g', 'c'])
    expect(anthropic.calledToolNames({})).toEqual([])
  })
})

describe('breakpoints', () => {
  const cc = { type: 'ephemeral' }
  it('counts anthropic markers at the top level, on tools, system blocks and message content blocks', () => {
    const body: JsonObject = {
      cache_control: cc,
      tools: [{ name: 'a', cache_control: cc }, { name: 'b' }],
      system: [{ type: 'text', text: 's', cache_control: cc }],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'x', cache_control: cc },
            { type: 'text', text: 'y' },
          ],
        },
        { role: 'user', content: 'string content carries none' },
        {
          role: 'assistant',
          content: [{ type: 'text', text: 'z', cache_control: { type: 'ephemeral', ttl: '1h' } }],
        },
      ],
    }
    expect(anthropic.breakpoints(body)).toBe(5)
    expect(anthropic.breakpoints({ system: 'plain' })).toBe(0)
  })

  it('counts none for openai', () => {
    expect(openai.breakpoints({ tools: [{ type: 'function', cache_control: cc }] })).toBe(0)
  })
})

describe('error envelopes and fields', () => {
  it('writes each dialect its own error envelope', () => {
    expect(JSON.parse(anthropic.errorBody('invalid_request_error', 'bad').toString('utf8'))).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'bad' },
    })
    expect(JSON.parse(openai.errorBody('api_error', 'broke').toString('utf8'))).toEqual({
      error: { message: 'broke', type: 'api_error', param: null, code: null },
    })
  })

  it('names the output-token limit field and finds dialects by name only', () => {
    expect(anthropic.maxTokensField).toBe('max_tokens')
    expect(openai.maxTokensField).toBe('max_completion_tokens')
    expect(dialectByName('anthropic')).toBe(anthropic)
    expect(dialectByName('openai')).toBe(openai)
    expect(dialectByName('responses')?.maxTokensField).toBe('max_output_tokens')
    expect(dialectByName('chat')).toBeUndefined()
    expect(dialectByName('toString')).toBeUndefined()
  })
})
