/**
 * view/transcript: every dialect's transcript reads the same — anthropic blocks (text, tool_use,
 * tool_result, thinking), openai tool_calls and tool messages, responses items — escaped; an
 * unknown block shows as its JSON; long text is folded, not cut.
 */
import { blockHtml, entryHtml, FOLD_CHARS, roleOf, textHtml } from '../../../proxy/view/transcript'

describe('a transcript entry', () => {
  it('shows an anthropic message’s text, tool call and tool result, escaped', () => {
    const a = entryHtml({
      role: 'assistant',
      content: [
        { type: 'text', text: 'Reading <file>.' },
        { type: 'tool_use', id: 'toolu_1', name: 'Read', input: { path: 'a.ts' } },
      ],
    }).text
    expect(a).toContain('class="msg assistant"')
    expect(a).toContain('Reading &lt;file&gt;.')
    expect(a).toContain('<b class="mono">Read</b>')
    expect(a).toContain('&quot;path&quot;: &quot;a.ts&quot;')
    const u = entryHtml({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'boom', is_error: true }],
    }).text
    expect(u).toContain('tool error')
    expect(u).toContain('boom')
  })

  it('shows openai tool calls with their arguments parsed, and a tool message as a result', () => {
    const a = entryHtml({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'grep', arguments: '{"q":"x"}' } }],
    }).text
    expect(a).toContain('<b class="mono">grep</b>')
    expect(a).toContain('&quot;q&quot;: &quot;x&quot;')
    expect(entryHtml({ role: 'tool', tool_call_id: 'call_1', content: 'found' }).text).toContain(
      'tool result',
    )
  })

  it('shows responses items by their type', () => {
    expect(roleOf({ type: 'function_call', name: 'f', arguments: '{}', call_id: 'c' })).toBe('function_call')
    expect(
      entryHtml({ type: 'function_call', name: 'f', arguments: 'not json', call_id: 'c' }).text,
    ).toContain('not json')
    expect(entryHtml({ type: 'function_call_output', call_id: 'c', output: 'done' }).text).toContain('done')
    expect(entryHtml({ role: 'user', content: [{ type: 'input_text', text: 'hi' }] }).text).toContain('hi')
  })

  it('shows a block of an unknown shape as its JSON, and folds thinking', () => {
    expect(blockHtml({ type: 'future_block', x: 1 }).text).toContain('future_block')
    expect(blockHtml({ type: 'thinking', thinking: 'hmm' }).text).toMatch(/^<details/)
  })
})

describe('long text', () => {
  it('is folded behind its first line and kept whole', () => {
    const long = `first line\n${'x'.repeat(FOLD_CHARS)}`
    const h = textHtml(long).text
    expect(h).toMatch(/^<details/)
    expect(h).toContain('first line…')
    expect(h).toContain('x'.repeat(FOLD_CHARS))
    expect(textHtml('short').text).toBe('<pre class="">short</pre>')
  })
})
