/** The openai answer (dialects/openai/answer): the assistant turn rebuilt from JSON and SSE, usage, an attempt's first request. */
import { openai } from '../../../../proxy/dialects'

const sse = (events: object[]): Buffer =>
  Buffer.from(
    events
      .map((e) => `event: ${(e as { type?: string }).type ?? 'x'}\ndata: ${JSON.stringify(e)}\n\n`)
      .join('') + ': keep-alive\n\n',
  )

describe('rebuilding an openai reply', () => {
  it('takes the message of a JSON answer', () => {
    const body = {
      choices: [
        {
          message: {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
          },
        },
      ],
    }
    const r = openai.rebuildReply(Buffer.from(JSON.stringify(body)), false)
    expect(r?.toolCalls).toEqual([{ id: 'c1', name: 'f' }])
  })

  it('joins streamed content and tool-call argument fragments by index', () => {
    const r = openai.rebuildReply(
      sse([
        { choices: [{ delta: { role: 'assistant', content: 'Hel' } }] },
        { choices: [{ delta: { content: 'lo' } }] },
        {
          choices: [
            {
              delta: {
                tool_calls: [{ index: 0, id: 'call_1', function: { name: 'get', arguments: '{"a"' } }],
              },
            },
          ],
        },
        { choices: [{ delta: { tool_calls: [{ index: 0, function: { arguments: ':1}' } }] } }] },
        { choices: [{ delta: {}, finish_reason: 'tool_calls' }] },
      ]),
      true,
    )
    expect(r?.turn).toEqual([
      {
        role: 'assistant',
        content: 'Hello',
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get', arguments: '{"a":1}' } }],
      },
    ])
    expect(r?.text).toBe('Hello\n[calls get]')
  })
})
