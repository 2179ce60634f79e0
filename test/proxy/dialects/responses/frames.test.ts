/**
 * The Responses WebSocket's frames, pure: what a client frame is, the whole request a frame
 * stands for (the conversation it continues, then its own items, their bytes as sent), what an
 * event says, and the in-band errors in the provider's shape.
 */
import { arrayElements, responsesFrames as f } from '../../../../proxy/dialects/responses/frames'
import type { JsonObject } from '../../../../proxy/core/json'

const bytes = (v: unknown): Buffer => Buffer.from(JSON.stringify(v))
const parse = (b: Buffer): JsonObject => JSON.parse(b.toString()) as JsonObject
const dev = { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'base' }] }
const user = (text: string) => ({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] })
const TOOLS = [{ type: 'function', name: 'exec_command', parameters: {} }]

describe('a frame', () => {
  it.each([
    [{ type: 'response.create' }, 'create'],
    [{ type: 'response.create', generate: false }, 'prewarm'],
    [{ type: 'response.create', generate: true }, 'create'],
    [{ type: 'response.processed', response_id: 'r' }, 'processed'],
    [{ type: 'response.interrupt' }, 'other'],
    [{}, 'other'],
  ])('%j is a %s frame', (frame, kind) => {
    expect(f.kindOf(frame as JsonObject)).toBe(kind)
  })

  it('stands for itself without its type when it continues nothing', () => {
    const frame = Buffer.from(
      '{"type":"response.create", "model":"m","input":[ {"role":"user","content":"hi"} ],"tools":[]}',
    )
    const w = f.wholeRequest(frame, parse(frame), undefined)
    expect(w.bytes.toString()).toBe('{"model":"m","input":[{"role":"user","content":"hi"}],"tools":[]}')
    expect(w.parsed).toEqual({ model: 'm', input: [{ role: 'user', content: 'hi' }], tools: [] })
    expect(w.frameItems).toBe(1)
  })

  it('stands for the conversation it continues, then its own items, their bytes as sent, without previous_response_id', () => {
    const first = bytes({ type: 'response.create', model: 'm', tools: TOOLS, input: [dev, user('one')] })
    const w1 = f.wholeRequest(first, parse(first), undefined)
    const answer = {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      content: [{ type: 'output_text', text: 'ok' }],
    }
    const held = f.continued(w1.conversation, [answer])
    const next = Buffer.from(
      `{"type":"response.create","model":"m","previous_response_id":"resp_1","tools":${JSON.stringify(TOOLS)},"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"two\\u00e9"}]}]}`,
    )
    const w2 = f.wholeRequest(next, parse(next), held)
    expect(parse(w2.bytes)).toEqual({
      model: 'm',
      tools: TOOLS,
      input: [dev, user('one'), answer, user('twoé')],
    })
    // The client's item keeps its bytes (its escape), the earlier items theirs.
    expect(w2.bytes.toString()).toContain('"text":"two\\u00e9"')
    expect(w2.parsed).toEqual(parse(w2.bytes))
    expect(w2.frameItems).toBe(1)
    expect(w2.conversation.items).toHaveLength(4)
  })

  it('without tools keeps the tools the conversation last declared', () => {
    const first = bytes({ type: 'response.create', model: 'm', tools: TOOLS, input: [dev] })
    const w1 = f.wholeRequest(first, parse(first), undefined)
    const next = bytes({ type: 'response.create', model: 'm', previous_response_id: 'r', input: [user('x')] })
    const w2 = f.wholeRequest(next, parse(next), w1.conversation)
    expect(parse(w2.bytes).tools).toEqual(TOOLS)
    expect(w2.parsed.tools).toEqual(TOOLS)
  })

  it('with a string input stands for one user message', () => {
    const frame = bytes({ type: 'response.create', model: 'm', input: 'hello' })
    expect(parse(f.wholeRequest(frame, parse(frame), undefined).bytes).input).toEqual([
      { role: 'user', content: 'hello' },
    ])
  })

  it('names the response it continues', () => {
    expect(f.continues({ previous_response_id: 'resp_9' })).toBe('resp_9')
    expect(f.continues({ previous_response_id: null })).toBeUndefined()
  })
})

describe('an event', () => {
  it('names its type, read without parsing when it comes first and by parsing when it does not', () => {
    expect(f.eventType(Buffer.from('{"type":"response.output_text.delta","delta":"x"}'))).toBe(
      'response.output_text.delta',
    )
    expect(f.eventType(Buffer.from('{"sequence_number":1,"type":"response.created"}'))).toBe(
      'response.created',
    )
    expect(f.eventType(Buffer.from('not json'))).toBeUndefined()
  })

  it('starts, adds an item to, or ends its step; a completed one may be continued, a failed one not', () => {
    const of = (e: JsonObject) => f.eventOf(String(e.type), () => e)
    expect(of({ type: 'response.created', response: { id: 'r1' } })).toEqual({ kind: 'started', id: 'r1' })
    expect(of({ type: 'response.output_item.done', output_index: 2, item: { id: 'i' } })).toEqual({
      kind: 'item',
      item: { id: 'i' },
      at: 2,
    })
    expect(of({ type: 'response.completed', response: { id: 'r1', output: [] } })).toEqual({
      kind: 'ended',
      id: 'r1',
      output: [],
      kept: true,
      status: 200,
    })
    expect(of({ type: 'response.failed', response: { id: 'r1' } })).toMatchObject({
      kind: 'ended',
      kept: false,
      status: 200,
    })
    expect(of({ type: 'error', status: 429, error: {} })).toMatchObject({
      kind: 'ended',
      kept: false,
      status: 429,
    })
    expect(of({ type: 'error', error: {} })).toMatchObject({ status: 400 })
    expect(
      f.eventOf('response.output_text.delta', () => {
        throw new Error('not parsed')
      }),
    ).toEqual({ kind: 'other' })
  })
})

describe('the in-band errors', () => {
  it('answer an unknown continuation in the provider’s own shape', () => {
    expect(parse(f.notFound('resp_x'))).toEqual({
      type: 'error',
      status: 400,
      error: {
        type: 'invalid_request_error',
        code: 'previous_response_not_found',
        message: "Previous response with id 'resp_x' not found.",
        param: 'previous_response_id',
      },
    })
  })

  it('carry holdfast’s own refusal in that shape with its code', () => {
    expect(parse(f.inBandError(503, 'overloaded_error', 'SHUTTING_DOWN', 'bye'))).toEqual({
      type: 'error',
      status: 503,
      error: { type: 'overloaded_error', code: 'SHUTTING_DOWN', message: 'bye', param: null },
    })
  })
})

test('arrayElements cuts an array into its elements’ bytes, spacing around them left out', () => {
  const b = Buffer.from('[ 1 , {"a":[2,3]} ,"x,y" ]')
  expect(arrayElements(b, 0, b.length).map(String)).toEqual(['1', '{"a":[2,3]}', '"x,y"'])
  expect(arrayElements(Buffer.from('[]'), 0, 2)).toEqual([])
})
