/**
 * The openai SDK's Responses API through holdfast, against the fake upstream: `responses.create`
 * (JSON and streamed) and `responses.stream` work as they would direct, each call is one recorded
 * step whose request.json is the bytes the provider got and whose response file is the bytes the
 * SDK got, with the Responses usage in meta.json; a tool dropped between two SDK calls is held.
 * Invariant: loopback only; the proxy and the fake are stopped after.
 */
import OpenAI from 'openai'
import { gitBytes, startProxy, type Proxy } from '../support/harness'

let p: Proxy
/** What the SDK received, per request, byte for byte (a tee of the answer's body). */
let received: Promise<Buffer>[] = []

beforeAll(async () => {
  p = await startProxy()
})
afterAll(async () => {
  await p.close()
})
beforeEach(() => {
  p.fake.reset()
  received = []
})

/** A client addressed at one agent, whose fetch keeps a copy of every answer's bytes. */
function client(agent: string): OpenAI {
  const teeing: typeof fetch = async (url, init) => {
    const res = await fetch(url, init)
    const copy = res.clone()
    received.push(copy.arrayBuffer().then((b) => Buffer.from(b)))
    return res
  }
  return new OpenAI({
    baseURL: `${p.url}/w/sdk/a/${agent}/v1`,
    apiKey: 'sk-test',
    maxRetries: 0,
    fetch: teeing,
  })
}

const show = (agent: string, n: string, file: string): Buffer =>
  gitBytes(p.repo('sdk'), 'show', `agents/${agent}:steps/${agent}/${n}/${file}`)
const meta = (agent: string, n = '001') =>
  JSON.parse(show(agent, n, 'meta.json').toString()) as Record<string, unknown>

const tool = (name: string) =>
  ({
    type: 'function',
    name,
    description: `The ${name} tool.`,
    strict: false,
    parameters: { type: 'object', properties: { cmd: { type: 'string' } } },
  }) as const

describe('the openai SDK responses API through holdfast', () => {
  it('gets the answer of responses.create and records it as a step, bytes equal both ways, usage in meta', async () => {
    const res = await client('create').responses.create({
      model: 'gpt-5',
      input: 'hello',
      max_output_tokens: 64,
    })
    expect(res.output_text).toBe('Hello from the fake upstream.')
    await p.settled()
    expect(p.fake.received.map((r) => r.url)).toEqual(['/v1/responses'])
    expect(show('create', '001', 'request.json').equals(p.fake.received[0]!.body)).toBe(true)
    expect(show('create', '001', 'response.json').equals(await received[0]!)).toBe(true)
    expect(meta('create')).toMatchObject({
      dialect: 'responses',
      status: 200,
      stop_reason: 'completed',
      response_file: 'response.json',
      usage: { output_tokens: res.usage!.output_tokens, cache_read_tokens: 0 },
    })
  })

  it('streams responses.create events through and records the raw stream as response.sse', async () => {
    const stream = await client('streamed').responses.create({ model: 'gpt-5', input: 'hello', stream: true })
    let text = ''
    const types = new Set<string>()
    for await (const event of stream) {
      types.add(event.type)
      if (event.type === 'response.output_text.delta') text += event.delta
    }
    expect(text).toBe('Hello from the fake upstream.')
    expect([...types]).toEqual(
      expect.arrayContaining(['response.created', 'response.output_item.done', 'response.completed']),
    )
    await p.settled()
    const sse = show('streamed', '001', 'response.sse')
    expect(sse.equals(await received[0]!)).toBe(true)
    expect(sse.toString()).toMatch(/^event: response\.created\n/)
    expect(meta('streamed')).toMatchObject({
      response_file: 'response.sse',
      usage: { output_tokens: expect.any(Number) },
    })
  })

  it('runs responses.stream over two steps; the tool dropped on the second is held and its prefix read from cache', async () => {
    const c = client('stream')
    p.fake.enqueue({ toolCalls: [{ name: 'exec_command', arguments: { cmd: 'ls' } }] })
    const first = await c.responses
      .stream({
        model: 'gpt-5',
        instructions: 'You are a coding agent.',
        input: [{ role: 'user', content: 'List the files.' }],
        tools: [tool('exec_command'), tool('fs_grep')],
        store: false,
      })
      .finalResponse()
    const call = first.output.find((i) => i.type === 'function_call')
    expect(call).toMatchObject({ name: 'exec_command', arguments: '{"cmd":"ls"}' })
    if (call?.type !== 'function_call') throw new Error('no function call')
    p.fake.enqueue({ text: 'There is a.txt.' })
    const second = await c.responses
      .stream({
        model: 'gpt-5',
        instructions: 'You are a coding agent.',
        input: [
          { role: 'user', content: 'List the files.' },
          { type: 'function_call', call_id: call.call_id, name: call.name, arguments: call.arguments },
          { type: 'function_call_output', call_id: call.call_id, output: 'a.txt' },
        ],
        tools: [tool('exec_command')],
        store: false,
      })
      .finalResponse()
    expect(second.output_text).toBe('There is a.txt.')
    await p.settled()
    const sentTools = (i: number) =>
      (JSON.parse(p.fake.received[i]!.body.toString()) as { tools: { name: string }[] }).tools.map(
        (t) => t.name,
      )
    expect(sentTools(1)).toEqual(['exec_command', 'fs_grep'])
    expect(meta('stream', '002')).toMatchObject({ hold: { applied: true, held: ['fs_grep'] } })
    const usage = meta('stream', '002').usage as { cache_read_tokens: number }
    expect(usage.cache_read_tokens).toBe(second.usage!.input_tokens_details.cached_tokens)
    expect(usage.cache_read_tokens).toBeGreaterThan(0)
    for (const [i, n] of [
      [0, '001'],
      [1, '002'],
    ] as const)
      expect(show('stream', n, 'response.sse').equals(await received[i]!)).toBe(true)
  })
})
