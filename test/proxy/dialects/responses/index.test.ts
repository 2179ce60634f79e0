/**
 * The Responses dialect's request side (dialects/responses): its shape checks, its cache facets in
 * Responses cache order (instructions and the leading developer items as the system, the next item
 * as the head), its flat tool format, the transcript's calls, and the row family it is sent to;
 * read against the requests Codex CLI 0.171.0 actually sent (test/fixtures/codex).
 */
import fs from 'node:fs'
import path from 'node:path'
import type { JsonObject } from '../../../../proxy/core/json'
import { presentedTool } from '../../../../proxy/core/loaded-set'
import { prefixMoves } from '../../../../proxy/core/why'
import { countsTokensAt, dialectByName, recordedAt, rowFamily } from '../../../../proxy/dialects'

const responses = dialectByName('responses')
const FIXTURES = path.join(__dirname, '..', '..', '..', 'fixtures', 'codex', '0.171.0', 'requests')
const codex = (n: number): JsonObject => {
  const file = fs.readdirSync(FIXTURES).find((f) => f.startsWith(String(n).padStart(3, '0')))
  return (JSON.parse(fs.readFileSync(path.join(FIXTURES, file as string), 'utf8')) as { body: JsonObject })
    .body
}

describe('the responses dialect is registered', () => {
  it('records POST /v1/responses and sends it to the openai rows with their bearer key', () => {
    expect(recordedAt('/v1/responses')).toBe(responses)
    expect(recordedAt('/v1/responses/resp_1')).toBeUndefined()
    expect(countsTokensAt('/v1/responses/input_tokens')).toBe(responses)
    expect(responses.rows).toBe(rowFamily('openai'))
    expect(responses.rows.upstreamUrl('https://api.openai.com/v1', '/v1/responses').href).toBe(
      'https://api.openai.com/v1/responses',
    )
    expect(responses.requiredHeaders).toEqual({})
    expect(responses.keyingHeaders({ 'anthropic-beta': 'x', 'session-id': 's' })).toEqual({})
  })

  it("answers in openai's error envelope", () => {
    expect(JSON.parse(responses.errorBody('invalid_request_error', 'bad').toString())).toEqual({
      error: { message: 'bad', type: 'invalid_request_error', param: null, code: null },
    })
  })
})

describe('shape checks of a responses request', () => {
  const check = (body: object) => responses.checkShape(body as JsonObject)

  it('accepts every request Codex sent, a string input, and the fields the API accepts as null', () => {
    for (const n of [1, 2, 3, 4, 5]) expect(check(codex(n))).toBeUndefined()
    expect(check({ model: 'gpt-5', input: 'hi', instructions: 'Be brief.' })).toBeUndefined()
    expect(
      check({
        model: 'gpt-5',
        input: [{ role: 'user', content: 'hi' }],
        instructions: null,
        previous_response_id: null,
        max_output_tokens: null,
        reasoning: null,
        parallel_tool_calls: null,
        store: null,
        conversation: null,
      }),
    ).toBeUndefined()
  })

  it.each([
    [{ model: 5 }, 'model must be a string'],
    [{ input: 3 }, 'input must be a string or an array of input items'],
    [{ input: ['hi'] }, 'input[0] must be an object'],
    [
      { input: [{ role: 'user', content: 7 }] },
      'input[0].content must be a string or an array of content parts',
    ],
    [
      { input: [{ type: 'message', content: [{ type: 'input_text', text: 1 }] }] },
      'input[0].content[0].text must be a string',
    ],
    [{ input: [{ type: 'function_call', name: 2, call_id: 'c' }] }, 'input[0].name must be a string'],
    [{ instructions: 3 }, 'instructions must be a string or an array of input items'],
    [{ tools: {} }, 'tools must be an array of tool objects'],
    [{ tools: [{ type: 'function', parameters: {} }] }, 'tools[0] must name its tool (name)'],
    [{ tool_choice: 1 }, 'tool_choice must be a string or an object'],
    [{ stream: 'yes' }, 'stream must be true or false'],
    [{ previous_response_id: 1 }, 'previous_response_id must be a string'],
    [{ prompt_cache_key: 1 }, 'prompt_cache_key must be a string'],
    [{ max_output_tokens: '10' }, 'max_output_tokens must be a number'],
    [{ parallel_tool_calls: 1 }, 'parallel_tool_calls must be true or false'],
    [{ reasoning: 'high' }, 'reasoning must be an object'],
  ])('names the first field it cannot read: %j', (body, problem) => {
    expect(check(body)).toBe(problem)
  })

  it('never checks what it does not read: hosted tools without a name, a reasoning item, an output', () => {
    expect(
      check({
        tools: [{ type: 'web_search', external_web_access: false }, { type: 'tool_search' }],
        input: [
          { type: 'reasoning', summary: [], content: null, encrypted_content: 'x' },
          { type: 'function_call_output', call_id: 'c', output: [{ type: 'input_text', text: 'ok' }] },
        ],
        include: 5,
        truncation: 0,
      }),
    ).toBeUndefined()
  })
})

describe('responses facets', () => {
  it("takes Codex's leading developer items as the system and its environment message as the head", () => {
    const body = codex(2)
    const f = responses.facets(body, {})
    const input = body.input as JsonObject[]
    expect(f.model).toBe('gpt-fake-1')
    expect(f.tools).toBe(body.tools)
    const system = f.system as { instructions: unknown; input: JsonObject[] }
    expect(system.instructions).toBeNull()
    expect(system.input.map((i) => i.role)).toEqual(['developer', 'developer'])
    expect(system.input[0]).toEqual({ type: 'message', role: 'developer', content: input[0]?.content })
    expect(f.head).toEqual(input[2]?.content)
    expect(f.keying).toEqual({
      tool_choice: 'auto',
      parallel_tool_calls: true,
      previous_response_id: undefined,
      conversation: undefined,
      prompt: undefined,
      prompt_cache_key: body.prompt_cache_key,
      reasoning: { summary: 'auto' },
      text: undefined,
    })
  })

  it('reads a string instructions and a string input as one text part each', () => {
    const f = responses.facets({ model: 'm', instructions: 'Be brief.', input: 'hi' }, {})
    expect(f.system).toEqual({ instructions: [{ type: 'input_text', text: 'Be brief.' }], input: [] })
    expect(f.head).toEqual([{ type: 'input_text', text: 'hi' }])
  })

  it('ignores item ids, status and explicit cache breakpoints, and reads null fields as absent', () => {
    const a = responses.facets(
      {
        input: [
          { type: 'message', id: 'msg_1', role: 'developer', content: 'S' },
          {
            role: 'user',
            content: [{ type: 'input_text', text: 'q', prompt_cache_breakpoint: { mode: 'explicit' } }],
          },
        ],
        previous_response_id: null,
      },
      {},
    )
    const b = responses.facets(
      {
        input: [
          { role: 'developer', content: [{ type: 'input_text', text: 'S' }], status: 'completed' },
          { type: 'message', role: 'user', content: 'q' },
        ],
      },
      {},
    )
    expect(a).toEqual(b)
    expect(a.keying.previous_response_id).toBeUndefined()
  })

  it('reads no input as no head and a first non-message item as a head of itself', () => {
    expect(responses.facets({}, {}).head).toBeUndefined()
    const call = { type: 'function_call', id: 'fc_1', name: 'f', arguments: '{}', call_id: 'c' }
    expect(responses.facets({ input: [call] }, {}).head).toEqual([
      { type: 'function_call', name: 'f', arguments: '{}', call_id: 'c' },
    ])
  })
})

describe('the responses transcript', () => {
  it('lists the items after the system part, the text of messages, their roles and the system text', () => {
    const body = codex(2)
    expect(responses.messages(body)).toHaveLength(6)
    expect(responses.transcript(body).map((i) => (i as JsonObject).type)).toEqual([
      'message',
      'message',
      'function_call',
      'function_call_output',
    ])
    const items = responses.messages(body)
    expect(responses.textOf(items[3] as JsonObject)).toBe(
      'Run `echo holdfast-marker` and tell me what it printed.',
    )
    expect(responses.roleOf(items[3] as JsonObject)).toBe('user')
    expect(responses.textOf(items[4] as JsonObject)).toBe('')
    expect(responses.systemText(body)).toMatch(/^You are a coding agent running in the Codex CLI/)
    expect(responses.systemText({ instructions: 'I.', input: [{ role: 'system', content: 'S.' }] })).toBe(
      'I.S.',
    )
    expect(responses.messages({ input: 'hi' })).toEqual([{ role: 'user', content: 'hi' }])
  })

  it('lists the tools the transcript calls by name, first seen first, without namespaced calls', () => {
    const body: JsonObject = {
      input: [
        { role: 'user', content: 'go' },
        { type: 'function_call', name: 'exec_command', call_id: 'a', arguments: '{}' },
        { type: 'custom_tool_call', name: 'apply_patch', call_id: 'b', input: '' },
        { type: 'function_call', name: 'spawn_agent', namespace: 'multi_agent_v1', call_id: 'c' },
        { type: 'function_call', name: 'exec_command', call_id: 'd', arguments: '{}' },
        { type: 'web_search_call', id: 'ws_1' },
      ],
    }
    expect(responses.calledToolNames(body)).toEqual(['exec_command', 'apply_patch'])
    expect(responses.calledToolNames({ input: 'hi' })).toEqual([])
  })

  it("names why's first difference at its own index in input, in Responses cache order", () => {
    const prev = codex(1)
    const cur = codex(2)
    const moved = JSON.parse(JSON.stringify(cur)) as JsonObject
    ;((moved.input as JsonObject[])[3]?.content as JsonObject[])[0]!.text = 'Another prompt.'
    expect(prefixMoves(responses, prev, cur, {}, {}).firstDifference).toBeNull()
    expect(prefixMoves(responses, prev, moved, {}, {}).firstDifference).toBe('input[3].content[0].text')
    const sys = JSON.parse(JSON.stringify(cur)) as JsonObject
    ;((sys.input as JsonObject[])[1]?.content as JsonObject[])[0]!.text = 'Other skills.'
    expect(prefixMoves(responses, prev, sys, {}, {})).toMatchObject({
      system: true,
      head: false,
      firstDifference: 'system.input[1].content[0].text',
    })
  })
})

describe('responses tools', () => {
  it('presents a loaded tool as a flat function tool and names tools by their name', () => {
    const entry = {
      client: 'fs',
      tool: { name: 'read', description: 'Reads a file.', input_schema: { type: 'object' } },
    }
    expect(responses.tool(presentedTool(entry))).toEqual({
      type: 'function',
      name: 'fs_read',
      description: 'Reads a file.',
      parameters: { type: 'object' },
    })
    const tools = codex(4).tools as JsonObject[]
    expect(tools.map((t) => responses.toolName(t) ?? `(${String(t.type)})`)).toEqual([
      'exec_command',
      'write_stdin',
      'request_user_input',
      'apply_patch',
      'view_image',
      'get_goal',
      'create_goal',
      'update_goal',
      '(tool_search)',
      '(web_search)',
    ])
    expect(responses.toolName({ type: 'namespace', name: 'multi_agent_v1', tools: [] })).toBe(
      'multi_agent_v1',
    )
  })

  it('reads max_output_tokens, puts the cache key in prompt_cache_key, and counts no breakpoints', () => {
    expect(responses.maxTokensField).toBe('max_output_tokens')
    expect(responses.clientMaxTokens({ max_output_tokens: 100 })).toBe(100)
    expect(responses.clientMaxTokens({ max_output_tokens: null })).toBeUndefined()
    expect(responses.promptCacheKeyField).toBe('prompt_cache_key')
    const marker = { prompt_cache_breakpoint: { mode: 'explicit' } }
    expect(
      responses.breakpoints({
        input: [{ role: 'user', content: [{ type: 'input_text', text: 'x', ...marker }] }],
      }),
    ).toBe(0)
  })
})
