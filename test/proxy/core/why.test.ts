/**
 * `why`'s comparison applies the hold's equivalences: a `cache_control` marker and a string
 * content that stands for one text block are not differences; a real edit is found at its path.
 */
import { prefixMoves, toolChanges } from '../../../proxy/core/why'
import { anthropic, openai } from '../../../proxy/dialects'
import type { JsonObject } from '../../../proxy/core/json'

const marked = (text: string) => [{ type: 'text', text, cache_control: { type: 'ephemeral' } }]

function body(messages: object[], extra: object = {}): JsonObject {
  return { model: 'claude-sonnet-4-5', system: 'You are terse.', messages, ...extra } as JsonObject
}

describe('toolChanges', () => {
  const tool = (name: string, description = name) => ({ name, description, input_schema: { type: 'object' } })
  it('names the tools added, removed and edited, and a reorder of the rest', () => {
    expect(
      toolChanges(anthropic, [tool('A'), tool('B'), tool('C')], [tool('C'), tool('A', 'new'), tool('D')]),
    ).toEqual({ added: ['D'], removed: ['B'], edited: ['A'], reordered: false })
    expect(toolChanges(anthropic, [tool('A'), tool('B')], [tool('B'), tool('A')])).toEqual({
      added: [],
      removed: [],
      edited: [],
      reordered: true,
    })
  })
})

describe('prefixMoves', () => {
  it('finds no difference when a marked text block became the plain string it stands for', () => {
    // What Claude Code does every turn: the breakpoint moves on, the old block becomes a string.
    const prev = body([
      { role: 'user', content: 'one' },
      { role: 'assistant', content: 'two' },
      { role: 'user', content: marked('three') },
    ])
    const cur = body([
      { role: 'user', content: 'one' },
      { role: 'assistant', content: 'two' },
      { role: 'user', content: 'three' },
      { role: 'assistant', content: 'four' },
      { role: 'user', content: marked('five') },
    ])
    const m = prefixMoves(anthropic, prev, cur, {}, {})
    expect(m).toEqual({
      model: false,
      tools: false,
      system: false,
      head: false,
      keying: [],
      firstDifference: null,
      difference: null,
      toolChanges: null,
    })
  })

  it('treats a string system prompt and its one text block alike', () => {
    const prev = body([{ role: 'user', content: 'one' }], {
      system: [{ type: 'text', text: 'You are terse.' }],
    })
    const cur = body([{ role: 'user', content: 'one' }])
    expect(prefixMoves(anthropic, prev, cur, {}, {}).firstDifference).toBeNull()
  })

  it('names the first real edit in cache order', () => {
    const prev = body([
      { role: 'user', content: 'one' },
      { role: 'assistant', content: 'two' },
    ])
    const cur = body([
      { role: 'user', content: 'one' },
      { role: 'assistant', content: 'TWO' },
    ])
    expect(prefixMoves(anthropic, prev, cur, {}, {}).firstDifference).toBe('messages[1].content[0].text')
    expect(prefixMoves(anthropic, prev, cur, {}, {}).difference).toEqual({
      path: 'messages[1].content[0].text',
      offset: 0,
      previous: 'two',
      current: 'TWO',
    })
  })

  it('reads a mid-conversation system entry as part of the prefix, at its own index', () => {
    // Claude Code 2.1 sends role "system" entries inside messages (its mid-conversation-system beta).
    const prev = body([
      { role: 'user', content: 'one' },
      { role: 'system', content: 'Deferred tools:\nmcp__a__x' },
      { role: 'assistant', content: 'two' },
    ])
    const cur = body([
      { role: 'user', content: 'one' },
      { role: 'system', content: 'Deferred tools:\nmcp__a__y' },
      { role: 'assistant', content: 'two' },
      { role: 'user', content: 'three' },
    ])
    const m = prefixMoves(anthropic, prev, cur, {}, {})
    expect(m.firstDifference).toBe('messages[1].content[0].text')
    expect(m.difference).toMatchObject({
      offset: 24,
      previous: 'Deferred tools:\\nmcp__a__x',
      current: 'Deferred tools:\\nmcp__a__y',
    })
    expect(m).toMatchObject({ system: false, head: false })
  })

  it('applies the same equivalence to openai messages after the system part', () => {
    const prev = {
      model: 'gpt-5',
      messages: [
        { role: 'system', content: 'terse' },
        { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      ],
    } as JsonObject
    const cur = {
      model: 'gpt-5',
      messages: [
        { role: 'system', content: 'terse' },
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'hello' },
      ],
    } as JsonObject
    expect(prefixMoves(openai, prev, cur, {}, {}).firstDifference).toBeNull()
  })
})
