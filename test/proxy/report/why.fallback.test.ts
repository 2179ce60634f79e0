/**
 * A fallback-served step, end to end: the client sends `fallbacks` (passed untouched), the upstream
 * declines the asked model and answers with another, with per-attempt `usage.iterations`;
 * meta.json records the model asked for (`route.model`) and the one that served
 * (`served_model`), the step is priced from the sum of its iterations, each at its own model, and
 * the next step's cause is `model_changed`.
 */
import { readStepMeta } from '../../../proxy/record/read'
import { why } from '../../../proxy/report/why'
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream'
import { configFor, startProxy, type Proxy } from '../../support/harness'

let fake: FakeUpstream
let p: Proxy
const PRICES = {
  'claude-opus-4-5': { input: 5, output: 25 },
  'claude-sonnet-4-5': { input: 3, output: 15 },
}
const SYSTEM = 'You are a careful assistant. '.repeat(40)
const body = (text: string) => ({
  model: 'claude-opus-4-5',
  max_tokens: 16,
  fallbacks: [{ model: 'claude-sonnet-4-5' }],
  system: [{ type: 'text', text: SYSTEM, cache_control: { type: 'ephemeral' } }],
  messages: [{ role: 'user', content: text }],
})
const iteration = (type: string, model: string, input: number, output: number) => ({
  type,
  model,
  input_tokens: input,
  output_tokens: output,
  cache_read_input_tokens: 0,
  cache_creation_input_tokens: 0,
})
const FALLBACK_ANSWER = JSON.stringify({
  id: 'msg_served_by_sonnet',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5',
  content: [{ type: 'text', text: 'ok' }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: {
    input_tokens: 1000,
    output_tokens: 100,
    cache_read_input_tokens: 0,
    cache_creation_input_tokens: 0,
    iterations: [
      iteration('message', 'claude-opus-4-5', 1000, 0),
      iteration('fallback_message', 'claude-sonnet-4-5', 1000, 100),
    ],
  },
})

beforeAll(async () => {
  fake = await startFakeUpstream()
  p = await startProxy({ fake, config: { ...configFor(fake), prices: PRICES } })
  const send = async (b: object): Promise<void> => {
    const res = await fetch(`${p.url}/w/fb/a/main/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify(b),
    })
    expect(res.status).toBe(200)
    await res.arrayBuffer()
  }
  fake.enqueue({ body: FALLBACK_ANSWER })
  await send(body('first'))
  await send({
    ...body('first'),
    messages: [
      ...body('first').messages,
      { role: 'assistant', content: 'ok' },
      { role: 'user', content: 'next' },
    ],
  })
  await p.settled()
})
afterAll(async () => {
  await p.close()
  await fake.close()
})

test('a fallback-served step records the model asked for and the one that served, and is priced from its iterations', async () => {
  const meta = await readStepMeta(p.server.ctx.workspace('fb'), 'main', 1)
  expect(JSON.parse(fake.received[0]!.body.toString()).fallbacks).toEqual([{ model: 'claude-sonnet-4-5' }])
  expect(meta?.route.model).toBe('claude-opus-4-5')
  expect(meta?.served_model).toBe('claude-sonnet-4-5')
  expect(meta?.usage?.iterations?.map((i) => [i.type, i.model])).toEqual([
    ['message', 'claude-opus-4-5'],
    ['fallback_message', 'claude-sonnet-4-5'],
  ])
  // opus 1,000 in at $5 + sonnet 1,000 in at $3 and 100 out at $15, per million; not the top-level usage at opus.
  expect(meta?.cost).toMatchObject({ usd: 0.0095, priced_as: 'claude-opus-4-5 + claude-sonnet-4-5' })
})

test('the step after a step served by another model is model_changed', async () => {
  const r = await why(p.home, 'fb', 'main', '002')
  expect(r.cause).toBe('model_changed')
})
