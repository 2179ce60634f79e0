/** The anthropic answer (dialects/anthropic/answer): the assistant turn rebuilt from JSON and SSE, usage, an attempt's first request. */
import { anthropic } from '../../../../proxy/dialects'

const sse = (events: object[]): Buffer =>
  Buffer.from(
    events
      .map((e) => `event: ${(e as { type?: string }).type ?? 'x'}\ndata: ${JSON.stringify(e)}\n\n`)
      .join('') + ': keep-alive\n\n',
  )

describe('rebuilding an anthropic reply', () => {
  it('takes the content of a JSON answer and lists its tool calls', () => {
    const body = {
      content: [
        { type: 'text', text: 'hi' },
        { type: 'tool_use', id: 't1', name: 'Read', input: { p: 1 } },
      ],
    }
    const r = anthropic.rebuildReply(Buffer.from(JSON.stringify(body)), false)
    expect(r).toEqual({
      turn: [{ role: 'assistant', content: body.content }],
      text: 'hi\n[calls Read]',
      toolCalls: [{ id: 't1', name: 'Read' }],
    })
  })

  it('joins text deltas, input_json_delta parts, thinking with its signature, and keeps redacted thinking', () => {
    const r = anthropic.rebuildReply(
      sse([
        { type: 'message_start', message: { content: [] } },
        { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'let me ' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'think' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig==' } },
        {
          type: 'content_block_start',
          index: 1,
          content_block: { type: 'redacted_thinking', data: 'opaque' },
        },
        { type: 'content_block_start', index: 2, content_block: { type: 'text', text: '' } },
        { type: 'content_block_delta', index: 2, delta: { type: 'text_delta', text: 'Reading ' } },
        { type: 'content_block_delta', index: 2, delta: { type: 'text_delta', text: 'it.' } },
        {
          type: 'content_block_start',
          index: 3,
          content_block: { type: 'tool_use', id: 'tu_1', name: 'Read', input: {} },
        },
        {
          type: 'content_block_delta',
          index: 3,
          delta: { type: 'input_json_delta', partial_json: '{"path":' },
        },
        {
          type: 'content_block_delta',
          index: 3,
          delta: { type: 'input_json_delta', partial_json: '"a.ts"}' },
        },
        { type: 'message_delta', delta: { stop_reason: 'tool_use' } },
      ]),
      true,
    )
    expect(r?.turn).toEqual([
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'let me think', signature: 'sig==' },
          { type: 'redacted_thinking', data: 'opaque' },
          { type: 'text', text: 'Reading it.' },
          { type: 'tool_use', id: 'tu_1', name: 'Read', input: { path: 'a.ts' } },
        ],
      },
    ])
    expect(r?.text).toBe('Reading it.\n[calls Read]')
    expect(r?.toolCalls).toEqual([{ id: 'tu_1', name: 'Read' }])
  })

  it('rebuilds nothing from an error body or an empty stream', () => {
    expect(anthropic.rebuildReply(Buffer.from('{"type":"error","error":{}}'), false)).toBeUndefined()
    expect(anthropic.rebuildReply(Buffer.from('<html>bad gateway</html>'), false)).toBeUndefined()
    expect(anthropic.rebuildReply(sse([{ type: 'message_start', message: {} }]), true)).toBeUndefined()
  })
})
