/** History closure (DESIGN §7): what is declared again for a transcript that calls a gone tool. */
import { closeHistory, presentedByClient, withHistoryClosed } from '../../../proxy/core/history-closure'
import type { JsonObject } from '../../../proxy/core/json'
import { notLoaded } from '../../../proxy/core/tool-sentences'
import { anthropic, openai } from '../../../proxy/dialects'

const tool = (name: string) => ({ name, description: `the ${name} tool`, input_schema: { type: 'object' } })
const anthropicBody = (tools: string[], called: string[]): JsonObject => ({
  model: 'm',
  tools: tools.map(tool),
  messages: [
    { role: 'user', content: 'go' },
    {
      role: 'assistant',
      content: called.map((name, i) => ({ type: 'tool_use', id: `t${i}`, name, input: {} })),
    },
    {
      role: 'user',
      content: called.map((_, i) => ({ type: 'tool_result', tool_use_id: `t${i}`, content: 'ok' })),
    },
  ],
})

describe('history closure', () => {
  it('declares a presented name the transcript calls and the tools no longer declare, with its refusal', () => {
    const c = closeHistory(anthropic, anthropicBody(['fx_echo'], ['fx_echo', 'fx_shout']), ['fx'])
    expect(c.names).toEqual(['fx_shout'])
    expect(c.tools).toEqual([
      { name: 'fx_shout', description: notLoaded('fx_shout'), input_schema: { type: 'object' } },
    ])
  })

  it("leaves alone the harness's own tools, names of undeclared clients, and names still declared", () => {
    const body = anthropicBody(['fx_echo'], ['Bash', 'other_tool', 'fx_echo', 'fx'])
    expect(closeHistory(anthropic, body, ['fx']).names).toEqual([])
    expect(closeHistory(anthropic, body, []).names).toEqual([])
  })

  it("closes a harness's MCP name for a loaded tool (mcp__holdfast__fx_echo) that the tools no longer declare", () => {
    const body = anthropicBody(['mcp__holdfast__clients'], ['mcp__holdfast__fx_echo', 'mcp__srv__fx_shout'])
    expect(closeHistory(anthropic, body, ['fx']).names).toEqual(['mcp__holdfast__fx_echo'])
    // Another server counts as holdfast's once its clients tool is declared.
    const named = anthropicBody(['mcp__srv__clients'], ['mcp__srv__fx_shout', 'mcp__other__fx_echo'])
    expect(closeHistory(anthropic, named, ['fx'])).toEqual({
      names: ['mcp__srv__fx_shout'],
      tools: [
        {
          name: 'mcp__srv__fx_shout',
          description: notLoaded('mcp__srv__fx_shout'),
          input_schema: { type: 'object' },
        },
      ],
    })
    // Still declared by the harness: nothing to close.
    const declared = anthropicBody(['mcp__holdfast__fx_echo'], ['mcp__holdfast__fx_echo'])
    expect(closeHistory(anthropic, declared, ['fx']).names).toEqual([])
  })

  it('recognises a presented name only as <client>_<tool> for a declared client, and callable', () => {
    expect(presentedByClient('fx_echo', ['fx'])).toBe(true)
    expect(presentedByClient('fx_', ['fx'])).toBe(false)
    expect(presentedByClient('fxecho', ['fx'])).toBe(false)
    expect(presentedByClient('fx_a.b', ['fx'])).toBe(false)
  })

  it('appends the closure inside the tools array, keeping every other byte', () => {
    const raw = Buffer.from(
      '{"model":"m", "tools":[ {"name":"fx_echo","description":"d","input_schema":{"type":"object","x":2.50}} ],' +
        '"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"fx_gone","input":{}}]}]}',
    )
    const parsed = JSON.parse(raw.toString()) as JsonObject
    const out = withHistoryClosed(anthropic, raw, parsed, ['fx'])
    expect(out?.names).toEqual(['fx_gone'])
    const text = out?.bytes.toString() ?? ''
    expect(
      text.startsWith(
        '{"model":"m", "tools":[ {"name":"fx_echo","description":"d","input_schema":{"type":"object","x":2.50}} ,',
      ),
    ).toBe(true)
    expect(JSON.parse(text)).toEqual(out?.parsed)
    expect((out?.parsed.tools as JsonObject[]).map((t) => t.name)).toEqual(['fx_echo', 'fx_gone'])
  })

  it('adds a tools array when the request has none, in the openai format', () => {
    const body: JsonObject = {
      model: 'm',
      messages: [
        { role: 'user', content: 'go' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c', type: 'function', function: { name: 'fx_gone', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'c', content: 'ok' },
      ],
    }
    const out = withHistoryClosed(openai, Buffer.from(JSON.stringify(body)), body, ['fx'])
    expect(JSON.parse(out?.bytes.toString() ?? '').tools).toEqual([
      {
        type: 'function',
        function: { name: 'fx_gone', description: notLoaded('fx_gone'), parameters: { type: 'object' } },
      },
    ])
  })

  it('changes nothing when nothing needs closing', () => {
    const body = anthropicBody(['fx_echo'], ['fx_echo'])
    expect(withHistoryClosed(anthropic, Buffer.from(JSON.stringify(body)), body, ['fx'])).toBeUndefined()
  })
})
