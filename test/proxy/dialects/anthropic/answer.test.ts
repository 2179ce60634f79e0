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

describe("an anthropic answer's id, served model and cache word", () => {
  const diagnostics = { cache_miss_reason: { type: 'tools_changed', cache_missed_input_tokens: 900 } }
  const usage = {
    input_tokens: 10,
    output_tokens: 5,
    cache_read_input_tokens: 100,
    cache_creation_input_tokens: 900,
    cache_creation: { ephemeral_5m_input_tokens: 600, ephemeral_1h_input_tokens: 300 },
  }

  it('reads the id, the model that served, the diagnostics and the writes by lifetime from a JSON answer', () => {
    const body = { type: 'message', id: 'msg_2', model: 'claude-opus-4-8', content: [], diagnostics, usage }
    expect(anthropic.answerFacts(Buffer.from(JSON.stringify(body)), false)).toEqual({
      usage: {
        input_tokens: 10,
        output_tokens: 5,
        cache_read_tokens: 100,
        cache_write_tokens: 900,
        cache_write_5m_tokens: 600,
        cache_write_1h_tokens: 300,
      },
      stopReason: null,
      streamError: null,
      id: 'msg_2',
      model: 'claude-opus-4-8',
      word: { said: 'reason', reason: 'tools_changed', missedInputTokens: 900, raw: diagnostics },
    })
  })

  it("reads them from message_start's message when streaming, keeping the lifetimes past message_delta", () => {
    const facts = anthropic.answerFacts(
      sse([
        {
          type: 'message_start',
          message: { id: 'msg_3', model: 'claude-sonnet-5', diagnostics: null, usage },
        },
        { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 7 } },
      ]),
      true,
    )
    expect(facts).toMatchObject({
      id: 'msg_3',
      model: 'claude-sonnet-5',
      word: { said: 'no_miss', reason: null },
      stopReason: 'end_turn',
      usage: { output_tokens: 7, cache_write_tokens: 900, cache_write_1h_tokens: 300 },
    })
  })

  it('reads no word from an answer that carries no diagnostics', () => {
    const body = { type: 'message', id: 'msg_4', model: 'm', content: [], usage }
    expect(anthropic.answerFacts(Buffer.from(JSON.stringify(body)), false).word).toBeUndefined()
  })

  it("reads a fallback's iterations, each with the model that ran it", () => {
    const body = {
      type: 'message',
      id: 'msg_5',
      model: 'claude-sonnet-5',
      content: [],
      usage: {
        ...usage,
        iterations: [
          { type: 'message', model: 'claude-opus-5', input_tokens: 10, output_tokens: 0 },
          {
            type: 'fallback_message',
            model: 'claude-sonnet-5',
            input_tokens: 10,
            output_tokens: 5,
            cache_read_input_tokens: 100,
            cache_creation_input_tokens: 900,
          },
        ],
      },
    }
    expect(anthropic.answerFacts(Buffer.from(JSON.stringify(body)), false).usage?.iterations).toEqual([
      {
        type: 'message',
        model: 'claude-opus-5',
        input_tokens: 10,
        output_tokens: 0,
        cache_read_tokens: 0,
        cache_write_tokens: 0,
      },
      {
        type: 'fallback_message',
        model: 'claude-sonnet-5',
        input_tokens: 10,
        output_tokens: 5,
        cache_read_tokens: 100,
        cache_write_tokens: 900,
      },
    ])
  })
})
