/**
 * proxy/core/sse: the events of a recorded `response.sse`. Rules: an event is a block ended by a
 * blank line (LF or CRLF); its `data:` lines (one optional space after the colon) are joined by
 * "\n"; only payloads that parse as a JSON object count; comments, `event:`-only blocks, `[DONE]`,
 * non-object JSON and a torn tail are skipped; a stream cut anywhere yields a prefix of the whole
 * stream's events, never a different one.
 */
import { sseEvents } from '../../../proxy/core/sse'

/** An anthropic Messages stream as the provider frames it. */
const ANTHROPIC = [
  'event: message_start',
  'data: {"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":12,"output_tokens":1}}}',
  '',
  ': a comment line',
  '',
  'event: ping',
  'data: {"type": "ping"}',
  '',
  'event: content_block_delta',
  'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"h\u00e9llo\\n\\nworld"}}',
  '',
  'event: message_delta',
  'data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":7}}',
  '',
  'event: message_stop',
  'data: {"type":"message_stop"}',
  '',
  '',
].join('\n')

const types = (text: string): unknown[] => sseEvents(text).map((e) => e.type)

describe('sseEvents', () => {
  it('reads every data payload of an anthropic stream in order, skipping the comment', () => {
    expect(types(ANTHROPIC)).toEqual([
      'message_start',
      'ping',
      'content_block_delta',
      'message_delta',
      'message_stop',
    ])
    expect(sseEvents(ANTHROPIC)[2]).toEqual({
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'text_delta', text: 'h\u00e9llo\n\nworld' },
    })
  })

  it('reads an openai stream framed with CRLF and skips its [DONE]', () => {
    const text =
      'data: {"id":"c1","choices":[{"delta":{"content":"a"}}]}\r\n\r\n' +
      'data:{"id":"c1","choices":[],"usage":{"prompt_tokens":3}}\r\n\r\n' +
      'data: [DONE]\r\n\r\n'
    expect(sseEvents(text)).toEqual([
      { id: 'c1', choices: [{ delta: { content: 'a' } }] },
      { id: 'c1', choices: [], usage: { prompt_tokens: 3 } },
    ])
  })

  it('joins the data lines of one event with a newline before parsing', () => {
    const text = 'event: x\ndata: {"a":\ndata:   1,\ndata: "b": "two"}\n\n'
    expect(sseEvents(text)).toEqual([{ a: 1, b: 'two' }])
  })

  it.each([
    ['a JSON array', 'data: [1,2]\n\n'],
    ['a JSON number', 'data: 42\n\n'],
    ['a JSON string', 'data: "x"\n\n'],
    ['not JSON', 'data: hello\n\n'],
    ['an event line without data', 'event: ping\n\n'],
    ['only comments', ': keep-alive\n\n: again\n\n'],
    ['a field that merely starts with d', 'dat: {"a":1}\n\n'],
    ['nothing', ''],
  ])('yields no event for %s', (_what, text) => {
    expect(sseEvents(text)).toEqual([])
  })

  it('yields a prefix of the whole stream for a stream cut at any byte, never a changed event', () => {
    const whole = sseEvents(ANTHROPIC)
    for (let cut = 0; cut <= ANTHROPIC.length; cut++) {
      const got = sseEvents(ANTHROPIC.slice(0, cut))
      expect(got).toEqual(whole.slice(0, got.length))
    }
    // Cut after the last payload's closing brace but before its blank line: the event is whole.
    const lastBrace = ANTHROPIC.lastIndexOf('}') + 1
    expect(sseEvents(ANTHROPIC.slice(0, lastBrace))).toEqual(whole)
  })

  it('reads a CRLF-framed stream exactly as the LF one, whatever chunks its recorded bytes arrived in', () => {
    const whole = sseEvents(ANTHROPIC)
    // Chunk boundaries fall anywhere (mid-line, mid-CRLF, mid-character): the recorded text is their concatenation.
    const crlf = ANTHROPIC.replace(/\n/g, '\r\n')
    const bytes = Buffer.from(crlf, 'utf8')
    for (const size of [1, 2, 3, 7, 64]) {
      const chunks: Buffer[] = []
      for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size))
      expect(sseEvents(Buffer.concat(chunks).toString('utf8'))).toEqual(whole)
    }
  })
})
