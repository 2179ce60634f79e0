/**
 * The fake Responses WebSocket keeps what the real one keeps per socket: the responses answered
 * on it (a continuation of any other is answered in band `previous_response_not_found`) and a
 * warm cache (a fresh socket reads nothing); its answers are response.created → the output's
 * events → response.completed with usage and cached_tokens; a pre-warm's output is empty.
 */
import { startFakeResponsesWs, type FakeResponsesWs } from './fake-responses-ws'
import { message, openSocket, responseId, turn, typeOf, wsUrl } from './socket-client'

let fake: FakeResponsesWs
beforeAll(async () => {
  fake = await startFakeResponsesWs()
})
afterAll(() => fake.close())

const create = (extra: object) => ({ type: 'response.create', model: 'gpt-fake-1', tools: [], ...extra })
const usageOf = (events: Buffer[]) =>
  (
    JSON.parse(events[events.length - 1]!.toString()) as {
      response: { usage: { input_tokens: number; input_tokens_details: { cached_tokens: number } } }
    }
  ).response.usage

test('a socket continues its own responses with only the new items, and reads its warm cache', async () => {
  const s = await openSocket(wsUrl(fake.url, '/v1/responses'))
  const long = message('developer', 'x'.repeat(4000))
  const first = await turn(s, create({ input: [long, message('user', 'one')] }))
  expect(first.map((e) => typeOf(e))).toEqual(
    expect.arrayContaining(['response.created', 'response.output_text.delta', 'response.completed']),
  )
  expect(usageOf(first).input_tokens_details.cached_tokens).toBe(0)
  const second = await turn(
    s,
    create({ previous_response_id: responseId(first), input: [message('user', 'two')] }),
  )
  expect(usageOf(second).input_tokens_details.cached_tokens).toBeGreaterThan(1000)
  expect(usageOf(second).input_tokens).toBeGreaterThan(usageOf(first).input_tokens)
  s.ws.close()
})

test('a continuation of a response another socket answered is answered previous_response_not_found', async () => {
  const a = await openSocket(wsUrl(fake.url, '/v1/responses'))
  const first = await turn(a, create({ input: [message('user', 'one')] }))
  const b = await openSocket(wsUrl(fake.url, '/v1/responses'))
  const [err] = await turn(b, create({ previous_response_id: responseId(first), input: [] }))
  expect(JSON.parse(err!.toString())).toMatchObject({
    type: 'error',
    status: 400,
    error: { code: 'previous_response_not_found' },
  })
  a.ws.close()
  b.ws.close()
})

test('a pre-warm is answered with an empty output', async () => {
  const s = await openSocket(wsUrl(fake.url, '/v1/responses'))
  const events = await turn(s, create({ generate: false, input: [message('developer', 'base')] }))
  expect(events.map((e) => typeOf(e))).toEqual([
    'response.created',
    'response.in_progress',
    'response.completed',
  ])
  s.ws.close()
})
