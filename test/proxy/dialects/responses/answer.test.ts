/**
 * The Responses answer (dialects/responses/answer): usage with cache reads and writes, the stop
 * reason, a stream's error events, the assistant turn rebuilt as output items from JSON and from
 * the event stream as the fake upstream sends it, and an attempt's first request.
 */
import type { Json, JsonObject } from '../../../../proxy/core/json'
import { NOT_RUN } from '../../../../proxy/core/continuation'
import { dialectByName } from '../../../../proxy/dialects'
import {
  outputItems,
  responseEvents,
  responseObject,
  type ResponsesAnswer,
} from '../../../support/fake-responses'

const responses = dialectByName('responses')

function answer(over: Partial<ResponsesAnswer> = {}): JsonObject {
  const a: ResponsesAnswer = {
    request: { model: 'gpt-5', include: ['reasoning.encrypted_content'] },
    model: 'gpt-5',
    seq: 7,
    text: undefined,
    reasoning: undefined,
    toolCalls: [],
    inputTokens: 1200,
    cachedTokens: 1024,
    ...over,
  }
  return responseObject(a, outputItems(a))
}
const json = (v: object): Buffer => Buffer.from(JSON.stringify(v))
const sse = (response: JsonObject): Buffer => Buffer.from(responseEvents(response).join(''))
const events = (list: object[]): Buffer =>
  Buffer.from(
    list.map((e) => `event: ${(e as { type: string }).type}\ndata: ${JSON.stringify(e)}\n\n`).join(''),
  )

describe('usage and stop reason of a responses answer', () => {
  it('reads uncached input, cache reads and output from a JSON answer and from response.completed', () => {
    const r = answer({ text: 'Hi.' })
    const usage = { input_tokens: 176, output_tokens: 1, cache_read_tokens: 1024, cache_write_tokens: 0 }
    const facts = { usage, stopReason: 'completed', streamError: null, id: 'resp_fake000007', model: 'gpt-5' }
    expect(responses.answerFacts(json(r), false)).toEqual(facts)
    expect(responses.answerFacts(sse(r), true)).toEqual(facts)
  })

  it('counts cache writes where the provider reports them, and never below zero', () => {
    const usage = {
      input_tokens: 100,
      input_tokens_details: { cached_tokens: 40, cache_write_tokens: 50 },
      output_tokens: 3,
    }
    expect(responses.answerFacts(json({ status: 'completed', usage }), false).usage).toEqual({
      input_tokens: 10,
      output_tokens: 3,
      cache_read_tokens: 40,
      cache_write_tokens: 50,
    })
    const odd = { input_tokens: 5, input_tokens_details: { cached_tokens: 9 }, output_tokens: 0 }
    expect(responses.answerFacts(json({ usage: odd }), false).usage?.input_tokens).toBe(0)
  })

  it('takes the stop reason from incomplete_details when the answer is incomplete', () => {
    const r = {
      ...answer({ text: 'Hi' }),
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
    }
    expect(responses.answerFacts(json(r), false).stopReason).toBe('max_output_tokens')
    expect(
      responses.answerFacts(events([{ type: 'response.incomplete', response: r }]), true).stopReason,
    ).toBe('max_output_tokens')
  })

  it('reports nothing for a body that is not a response, and no usage for a stream cut before its end', () => {
    expect(responses.answerFacts(Buffer.from('<html>bad gateway</html>'), false)).toEqual({
      usage: null,
      stopReason: null,
      streamError: null,
    })
    const whole = responseEvents(answer({ text: 'Hello there.' }))
    const cut = Buffer.from(whole.slice(0, -1).join(''))
    expect(responses.answerFacts(cut, true)).toEqual({ usage: null, stopReason: null, streamError: null })
  })

  it.each([
    [
      'an error event',
      [{ type: 'error', code: 'server_error', message: 'The server had an error.', param: null }],
      { type: 'server_error', message: 'The server had an error.' },
    ],
    [
      'an error event with an error object',
      [{ type: 'error', error: { type: 'overloaded', message: 'Busy.' } }],
      { type: 'overloaded', message: 'Busy.' },
    ],
    [
      'response.failed',
      [
        {
          type: 'response.failed',
          response: { status: 'failed', error: { code: 'rate_limit_exceeded', message: 'Slow down.' } },
        },
      ],
      { type: 'rate_limit_exceeded', message: 'Slow down.' },
    ],
  ])('reads %s in a 200 stream as a stream error', (_, list, streamError) => {
    const facts = responses.answerFacts(events(list), true)
    expect(facts.streamError).toEqual(streamError)
  })
})

describe('rebuilding a responses reply', () => {
  const call = { name: 'exec_command', arguments: { cmd: 'echo hi' } }

  it('takes the output items of a JSON answer as the turn, with its text and calls', () => {
    const r = answer({ reasoning: 'Think.', text: 'Running it.', toolCalls: [call] })
    const rebuilt = responses.rebuildReply(json(r), false)
    expect(rebuilt?.turn).toEqual(r.output)
    expect((rebuilt?.turn as JsonObject[]).map((i) => i.type)).toEqual([
      'reasoning',
      'message',
      'function_call',
    ])
    expect(rebuilt?.text).toBe('Running it.\n[calls exec_command]')
    expect(rebuilt?.toolCalls).toEqual([{ id: 'call_fake000007_0', name: 'exec_command' }])
  })

  it('rebuilds the same turn from the event stream', () => {
    const r = answer({ reasoning: 'Think.', text: 'Running it.', toolCalls: [call] })
    expect(responses.rebuildReply(sse(r), true)).toEqual(responses.rebuildReply(json(r), false))
  })

  it('falls back to the output_item.done items of a stream that ended without response.completed', () => {
    const r = answer({ text: 'Partial.', toolCalls: [call] })
    const done = responseEvents(r).filter((e) => e.includes('"response.output_item.done"'))
    const rebuilt = responses.rebuildReply(Buffer.from(done.reverse().join('')), true)
    expect(rebuilt?.turn).toEqual(r.output)
    expect(rebuilt?.text).toBe('Partial.\n[calls exec_command]')
  })

  it('has no turn for an error body or an empty output', () => {
    expect(responses.rebuildReply(json({ error: { message: 'no' } }), false)).toBeUndefined()
    expect(responses.rebuildReply(json({ output: [] }), false)).toBeUndefined()
    expect(responses.rebuildReply(Buffer.from(''), true)).toBeUndefined()
  })
})

describe("a responses attempt's first request", () => {
  const reply = (output: object[]) => responses.rebuildReply(json({ status: 'completed', output }), false)

  it('starts clean with the text as one user message, a max_output_tokens and a stream', () => {
    expect(responses.firstRequest({ text: 'Goal.', roleModel: 'gpt-5', roleMaxTokens: 300 })).toEqual({
      model: 'gpt-5',
      max_output_tokens: 300,
      stream: true,
      input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Goal.' }] }],
    })
  })

  it('continues a notch: its input, the output items, "not run" per call, the text; no previous_response_id', () => {
    const request: JsonObject = {
      model: 'gpt-5',
      input: [
        { role: 'developer', content: 'Be brief.' },
        { role: 'user', content: 'Do it.' },
      ],
      tools: [{ type: 'function', name: 'exec_command', parameters: { type: 'object' } }],
      store: false,
      previous_response_id: 'resp_0',
      prompt_cache_key: 'session-1',
    }
    const output = [
      { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'gAAAAA' },
      { type: 'function_call', id: 'fc_1', name: 'exec_command', arguments: '{}', call_id: 'call_1' },
      { type: 'custom_tool_call', id: 'ctc_1', name: 'apply_patch', input: '*** Begin', call_id: 'call_2' },
    ]
    const body = responses.firstRequest({
      notch: { request, reply: reply(output) },
      text: 'Review.',
      roleModel: 'gpt-5',
    })
    expect(body).toEqual({
      model: 'gpt-5',
      tools: request.tools,
      store: false,
      prompt_cache_key: 'session-1',
      stream: true,
      max_output_tokens: 4096,
      input: [
        ...(request.input as Json[]),
        ...output,
        { type: 'function_call_output', call_id: 'call_1', output: NOT_RUN },
        { type: 'custom_tool_call_output', call_id: 'call_2', output: NOT_RUN },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Review.' }] },
      ],
    })
  })

  it('drops reasoning items when the model changes, and reads a string input as one user message', () => {
    const request: JsonObject = { model: 'gpt-5', input: 'Do it.', max_output_tokens: 50 }
    const output = [
      { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'gAAAAA' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Done.' }] },
    ]
    const body = responses.firstRequest({
      notch: { request, reply: reply(output) },
      text: 'Again.',
      roleModel: 'gpt-5-mini',
    })
    expect(body.max_output_tokens).toBe(50)
    expect((body.input as JsonObject[]).map((i) => i.type ?? i.role)).toEqual(['user', 'message', 'message'])
  })
})

describe("a responses answer's cache word", () => {
  it('reads prompt_cache_diagnostics from a JSON response and from the final response of a stream', () => {
    const diagnostics = { type: 'cache_miss', reason: 'instructions_changed', cache_missed_tokens: 1500 }
    const r = { ...answer({ text: 'Hi.' }), prompt_cache_diagnostics: diagnostics }
    const word = { said: 'reason', reason: 'instructions_changed', missedInputTokens: 1500, raw: diagnostics }
    expect(responses.answerFacts(json(r), false).word).toEqual(word)
    expect(responses.answerFacts(sse(r), true).word).toEqual(word)
  })
})
