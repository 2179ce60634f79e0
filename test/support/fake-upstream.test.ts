/**
 * Tests of the fake upstream itself, driven by the real SDK clients pointed straight at it (no proxy).
 * Invariant: what the SDKs accept here is what the proxy's integration tests may rely on.
 */
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { spawn } from 'node:child_process'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as http from 'node:http'
import * as path from 'node:path'
import * as zlib from 'node:zlib'
import { DEFAULT_TEXT, startFakeUpstream, type FakeUpstream } from './fake-upstream'

let fake: FakeUpstream
let anthropic: Anthropic
let openai: OpenAI

beforeAll(async () => {
  fake = await startFakeUpstream()
  anthropic = new Anthropic({ baseURL: fake.anthropicBaseUrl, apiKey: 'test', maxRetries: 0 })
  openai = new OpenAI({ baseURL: fake.openaiBaseUrl, apiKey: 'test', maxRetries: 0 })
})

afterAll(async () => {
  await fake.close()
})

beforeEach(() => fake.reset())

const MODEL = 'claude-fake-1'
const hello = { model: MODEL, max_tokens: 64, messages: [{ role: 'user' as const, content: 'Hello' }] }

async function waitFor(condition: () => boolean, ms = 2000): Promise<void> {
  const deadline = Date.now() + ms
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

/** A raw HTTP exchange, so tests can see bytes and headers that the SDKs hide. */
function raw(
  method: string,
  url: string,
  body?: Buffer | string,
  headers: http.OutgoingHttpHeaders = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      )
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(body)
  })
}

describe('anthropic dialect', () => {
  test('a non-stream message echoes the model, answers the text and carries usage and a request-id', async () => {
    const { data, response } = await anthropic.messages.create(hello).withResponse()
    expect(data).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: MODEL,
      content: [{ type: 'text', text: DEFAULT_TEXT }],
      stop_reason: 'end_turn',
    })
    expect(data.id).toMatch(/^msg_/)
    expect(data.usage.input_tokens).toBeGreaterThan(0)
    expect(data.usage.output_tokens).toBe(Math.ceil(DEFAULT_TEXT.length / 4))
    expect(data.usage.cache_read_input_tokens).toBe(0)
    expect(response.headers.get('request-id')).toMatch(/^req_/)
    expect(response.headers.get('anthropic-ratelimit-requests-remaining')).toBe('3999')
  })

  test('a streamed message arrives as the real event sequence, pings skipped by the SDK', async () => {
    const stream = await anthropic.messages.create({ ...hello, stream: true })
    const types: string[] = []
    let text = ''
    for await (const event of stream) {
      types.push(event.type)
      if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text
    }
    expect(types[0]).toBe('message_start')
    expect(types[1]).toBe('content_block_start')
    expect(types.filter((t) => t === 'content_block_delta').length).toBeGreaterThanOrEqual(3)
    expect(types.slice(-3)).toEqual(['content_block_stop', 'message_delta', 'message_stop'])
    expect(text).toBe(DEFAULT_TEXT)
  })

  test('the raw stream holds a ping, a keep-alive comment and cache usage in message_start', async () => {
    const res = await raw('POST', `${fake.url}/v1/messages`, JSON.stringify({ ...hello, stream: true }))
    const sse = res.body.toString()
    expect(res.headers['content-type']).toBe('text/event-stream; charset=utf-8')
    expect(sse).toContain('event: ping\n')
    expect(sse).toContain('\n: keep-alive\n\n')
    expect(sse).toMatch(/"cache_read_input_tokens":0/)
    expect(sse).toMatch(/"cache_creation_input_tokens":0/)
    expect(sse.endsWith('event: message_stop\ndata: {"type":"message_stop"}\n\n')).toBe(true)
  })

  test('messages.stream() accumulates the final message with text and usage', async () => {
    const stream = anthropic.messages.stream({ ...hello, messages: [{ role: 'user', content: 'Stream it' }] })
    const message = await stream.finalMessage()
    expect(message.content).toMatchObject([{ type: 'text', text: DEFAULT_TEXT }])
    expect(message.stop_reason).toBe('end_turn')
    expect(message.usage.output_tokens).toBe(Math.ceil(DEFAULT_TEXT.length / 4))
  })

  test('answer scripts each request that no queued script takes, from its path, headers and body', async () => {
    const model = await startFakeUpstream({
      answer: (asked) => ({ text: `seen ${asked.path} ${String(asked.body?.max_tokens)}` }),
    })
    try {
      const client = new Anthropic({ baseURL: model.anthropicBaseUrl, apiKey: 'test', maxRetries: 0 })
      model.enqueue({ text: 'queued first' })
      const first = await client.messages.create(hello)
      const second = await client.messages.create(hello)
      expect(first.content).toMatchObject([{ text: 'queued first' }])
      expect(second.content).toMatchObject([{ text: 'seen /v1/messages 64' }])
    } finally {
      await model.close()
    }
  })

  test('count_tokens answers ceil(body bytes / 4)', async () => {
    const counted = await anthropic.messages.countTokens({ model: MODEL, messages: hello.messages })
    const sent = fake.received[0]!.body
    expect(fake.received[0]!.url).toBe('/v1/messages/count_tokens')
    expect(counted.input_tokens).toBe(Math.ceil(sent.length / 4))
  })

  test('a scripted 400 surfaces as the SDK’s BadRequestError with the real error envelope', async () => {
    fake.enqueue({ status: 400, errorMessage: 'max_tokens: field required' })
    const err = await anthropic.messages.create(hello).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(Anthropic.BadRequestError)
    expect(err).toBeInstanceOf(Anthropic.APIError)
    const apiError = err as InstanceType<typeof Anthropic.APIError>
    expect(apiError.status).toBe(400)
    expect(apiError.type).toBe('invalid_request_error')
    expect(apiError.apiMessage).toBe('max_tokens: field required')
    expect(apiError.requestID).toMatch(/^req_/)
    expect(apiError.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } })
  })

  test('a scripted 429 with retry-after and x-should-retry surfaces as RateLimitError carrying them', async () => {
    fake.enqueue({ status: 429, headers: { 'retry-after': '7', 'x-should-retry': 'true' } })
    const err = await anthropic.messages.create(hello).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(Anthropic.RateLimitError)
    const apiError = err as InstanceType<typeof Anthropic.APIError>
    expect(apiError.status).toBe(429)
    expect(apiError.type).toBe('rate_limit_error')
    expect(apiError.headers?.get('retry-after')).toBe('7')
    expect(apiError.headers?.get('x-should-retry')).toBe('true')
  })

  test('a gzip script sends content-encoding gzip and the SDK decodes it', async () => {
    fake.enqueue({ gzip: true, text: 'zipped' })
    const message = await anthropic.messages.create(hello)
    expect(message.content).toEqual([{ type: 'text', text: 'zipped' }])

    fake.enqueue({ gzip: true, text: 'zipped' })
    const res = await raw('POST', `${fake.url}/v1/messages`, JSON.stringify(hello))
    expect(res.headers['content-encoding']).toBe('gzip')
    expect(JSON.parse(zlib.gunzipSync(res.body).toString())).toMatchObject({ content: [{ text: 'zipped' }] })
  })

  test('a gzip script on a stream is still decoded event by event', async () => {
    fake.enqueue({ gzip: true, text: 'zipped stream' })
    const message = await anthropic.messages.stream(hello).finalMessage()
    expect(message.content).toMatchObject([{ type: 'text', text: 'zipped stream' }])
  })

  test('received holds the exact body bytes and the headers the SDK sent, recorded in order', async () => {
    await anthropic.messages.create(hello)
    const odd = Buffer.from('{ "model" : "x",\n  "messages": [], "note": "é ✓" }\n')
    await raw('POST', `${fake.url}/v1/messages?beta=true`, odd, { 'content-type': 'application/json' })
    expect(fake.received).toHaveLength(2)
    const [first, second] = fake.received
    expect(first!.body.equals(Buffer.from(JSON.stringify(hello)))).toBe(true)
    expect(first!.headers.authorization).toBe('Bearer test')
    expect(first!.headers['anthropic-version']).toEqual(expect.any(String))
    expect(second!.url).toBe('/v1/messages?beta=true')
    expect(second!.body.equals(odd)).toBe(true)
    expect(second!.at).toBeGreaterThanOrEqual(first!.at)
  })

  test('a second request sharing the prefix reads the cache; markers make the rest a cache write', async () => {
    const system = [{ type: 'text' as const, text: 'You are a careful assistant. '.repeat(40) }]
    const tools = [
      { name: 'lookup', description: 'Looks things up', input_schema: { type: 'object' as const } },
    ]
    const first = await anthropic.messages.create({
      ...hello,
      tools,
      system: [{ ...system[0]!, cache_control: { type: 'ephemeral' } }],
    })
    expect(first.usage.cache_read_input_tokens).toBe(0)
    expect(first.usage.cache_creation_input_tokens).toBeGreaterThan(250)

    const second = await anthropic.messages.create({
      ...hello,
      tools,
      system,
      messages: [...hello.messages, { role: 'assistant', content: 'Hi' }, { role: 'user', content: 'More' }],
    })
    expect(second.usage.cache_read_input_tokens).toBeGreaterThan(250)
    expect(second.usage.cache_creation_input_tokens).toBe(0)

    const otherTools = await anthropic.messages.create({ ...hello, tools: [], system })
    expect(otherTools.usage.cache_read_input_tokens).toBeLessThan(5)
  })

  test('a string system or content reads the same cache as one text block', async () => {
    await anthropic.messages.create({ ...hello, system: 'Be brief. '.repeat(50) })
    const again = await anthropic.messages.create({
      ...hello,
      system: [{ type: 'text', text: 'Be brief. '.repeat(50) }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }],
    })
    const total = again.usage.input_tokens + (again.usage.cache_read_input_tokens ?? 0)
    expect(again.usage.cache_read_input_tokens).toBeGreaterThanOrEqual(total - 1)
  })

  test('a failMidStream script cuts the stream, the SDK throws, and the cut is not an abort', async () => {
    fake.enqueue({ failMidStream: true })
    const stream = await anthropic.messages.create({ ...hello, stream: true })
    const seen: string[] = []
    const err = await (async () => {
      for await (const event of stream) seen.push(event.type)
    })().catch((e: unknown) => e)
    // undici's error comes from another realm than jest's, so match its message, not its class.
    expect((err as Error).message).toBe('terminated')
    expect(seen).toContain('message_start')
    expect(seen).not.toContain('message_stop')
    expect(fake.aborted).toBe(0)
  })

  test('a hanging request aborted through the SDK’s signal is counted in aborted', async () => {
    fake.enqueue({ hang: true })
    const controller = new AbortController()
    const pending = anthropic.messages.create(hello, { signal: controller.signal }).catch((e: unknown) => e)
    await waitFor(() => fake.received.length === 1)
    controller.abort()
    expect(await pending).toBeInstanceOf(Anthropic.APIUserAbortError)
    await waitFor(() => fake.aborted === 1)
  })

  test('a client that leaves a slow stream midway is counted in aborted', async () => {
    fake.enqueue({ chunkDelayMs: 20 })
    const stream = await anthropic.messages.create({ ...hello, stream: true })
    for await (const event of stream) if (event.type === 'content_block_start') break
    await waitFor(() => fake.aborted === 1)
  })

  test('scripted tool calls are tool_use blocks after the text, with stop_reason tool_use', async () => {
    fake.enqueue({ text: 'Let me look.', toolCalls: [{ name: 'lookup', arguments: { q: 'holdfast' } }] })
    const message = await anthropic.messages.create(hello)
    expect(message.stop_reason).toBe('tool_use')
    expect(message.content).toMatchObject([
      { type: 'text', text: 'Let me look.' },
      { type: 'tool_use', name: 'lookup', input: { q: 'holdfast' } },
    ])
    expect((message.content[1] as Anthropic.ToolUseBlock).id).toMatch(/^toolu_/)
  })

  test('a streamed tool call arrives as input_json_delta pieces the SDK parses into its input', async () => {
    const input = { cmd: 'ls -la /tmp && echo a-longer-command' }
    fake.enqueue({ toolCalls: [{ name: 'exec_command', arguments: input }] })
    const types: string[] = []
    const stream = anthropic.messages.stream(hello).on('streamEvent', (event) => {
      types.push(event.type)
    })
    const message = await stream.finalMessage()
    expect(message.content).toMatchObject([{ type: 'tool_use', name: 'exec_command', input }])
    expect(message.stop_reason).toBe('tool_use')
    expect(types.filter((t) => t === 'content_block_delta').length).toBeGreaterThan(1)
  })

  test('the models list is in the anthropic dialect when anthropic-version is sent', async () => {
    const page = await anthropic.models.list()
    expect(page.data.map((m) => m.id)).toEqual(['claude-fake-1', 'claude-fake-2'])
    expect(page.data[0]).toMatchObject({ type: 'model', display_name: 'Claude Fake 1' })
  })
})

describe('openai dialect', () => {
  const chat = { model: 'gpt-fake-1', messages: [{ role: 'user' as const, content: 'Hello' }] }

  test('a non-stream completion carries choices, finish_reason stop, cached_tokens and x-request-id', async () => {
    const { data, response } = await openai.chat.completions.create(chat).withResponse()
    expect(data).toMatchObject({
      object: 'chat.completion',
      model: 'gpt-fake-1',
      choices: [{ index: 0, message: { role: 'assistant', content: DEFAULT_TEXT }, finish_reason: 'stop' }],
    })
    expect(data.usage?.prompt_tokens_details?.cached_tokens).toBe(0)
    expect(response.headers.get('x-request-id')).toMatch(/^req_/)
    expect(fake.received[0]!.headers.authorization).toBe('Bearer test')
  })

  test('a stream without include_usage has no usage chunk', async () => {
    const stream = await openai.chat.completions.create({ ...chat, stream: true })
    let text = ''
    const finishes: (string | null)[] = []
    for await (const chunk of stream) {
      expect(chunk.usage).toBeUndefined()
      for (const choice of chunk.choices) {
        text += choice.delta.content ?? ''
        finishes.push(choice.finish_reason)
      }
    }
    expect(text).toBe(DEFAULT_TEXT)
    expect(finishes.at(-1)).toBe('stop')
  })

  test('a stream with include_usage ends with a usage chunk whose choices are empty', async () => {
    const stream = await openai.chat.completions.create({
      ...chat,
      stream: true,
      stream_options: { include_usage: true },
    })
    const chunks = []
    for await (const chunk of stream) chunks.push(chunk)
    const last = chunks.at(-1)!
    expect(last.choices).toEqual([])
    expect(last.usage).toMatchObject({ completion_tokens: Math.ceil(DEFAULT_TEXT.length / 4) })
    expect(last.usage?.prompt_tokens_details?.cached_tokens).toBe(0)
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true)
  })

  test('the raw stream ends with data: [DONE] and holds a keep-alive comment', async () => {
    const res = await raw(
      'POST',
      `${fake.openaiBaseUrl}/chat/completions`,
      JSON.stringify({ ...chat, stream: true }),
    )
    const sse = res.body.toString()
    expect(sse).toContain('\n: keep-alive\n\n')
    expect(sse.endsWith('data: [DONE]\n\n')).toBe(true)
  })

  test('a second request sharing the prefix reports cached_tokens', async () => {
    const system = { role: 'system' as const, content: 'You are terse. '.repeat(40) }
    await openai.chat.completions.create({ ...chat, messages: [system, ...chat.messages] })
    const second = await openai.chat.completions.create({
      ...chat,
      messages: [
        system,
        ...chat.messages,
        { role: 'assistant', content: 'Hi' },
        { role: 'user', content: 'More' },
      ],
    })
    expect(second.usage?.prompt_tokens_details?.cached_tokens).toBeGreaterThan(140)
  })

  test('a scripted 429 surfaces as the SDK’s RateLimitError with the openai error body', async () => {
    fake.enqueue({ status: 429, headers: { 'retry-after': '3' } })
    const err = await openai.chat.completions.create(chat).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(OpenAI.RateLimitError)
    const apiError = err as InstanceType<typeof OpenAI.APIError>
    expect(apiError.status).toBe(429)
    expect(apiError.code).toBe('rate_limit_exceeded')
    expect(apiError.headers?.get('retry-after')).toBe('3')
  })

  test('a scripted 400 surfaces as BadRequestError; a raw body script is sent as is', async () => {
    fake.enqueue({ status: 400, errorMessage: 'Unrecognized request argument' })
    const err = await openai.chat.completions.create(chat).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(OpenAI.BadRequestError)
    expect((err as InstanceType<typeof OpenAI.APIError>).message).toContain('Unrecognized request argument')

    fake.enqueue({ status: 503, body: 'upstream connect error', headers: { 'content-type': 'text/plain' } })
    const res = await raw('POST', `${fake.openaiBaseUrl}/chat/completions`, JSON.stringify(chat))
    expect(res.status).toBe(503)
    expect(res.headers['content-type']).toBe('text/plain')
    expect(res.body.toString()).toBe('upstream connect error')
  })

  test('the SDK retries scripted 500s, counting them in X-Stainless-Retry-Count', async () => {
    const retrying = new OpenAI({ baseURL: fake.openaiBaseUrl, apiKey: 'test', maxRetries: 2 })
    fake.enqueue({ path: '/v1/chat/completions', status: 500, times: 2, headers: { 'retry-after-ms': '1' } })
    const done = await retrying.chat.completions.create(chat)
    expect(done.choices[0]?.message.content).toBe(DEFAULT_TEXT)
    expect(fake.received.map((r) => r.headers['x-stainless-retry-count'])).toEqual(['0', '1', '2'])
  })

  test('scripted tool calls are tool_calls with finish_reason tool_calls and null content', async () => {
    fake.enqueue({ toolCalls: [{ name: 'lookup', arguments: { q: 'holdfast' } }, { name: 'noop' }] })
    const completion = await openai.chat.completions.create(chat)
    const choice = completion.choices[0]!
    expect(choice.finish_reason).toBe('tool_calls')
    expect(choice.message.content).toBeNull()
    expect(choice.message.tool_calls).toMatchObject([
      { type: 'function', function: { name: 'lookup', arguments: '{"q":"holdfast"}' } },
      { type: 'function', function: { name: 'noop', arguments: '{}' } },
    ])
    expect(choice.message.tool_calls![0]!.id).toMatch(/^call_/)
  })

  test('streamed tool calls arrive as indexed argument deltas the SDK reassembles', async () => {
    const args = { cmd: 'ls -la /tmp && echo a-longer-command' }
    fake.enqueue({ text: 'Running it.', toolCalls: [{ name: 'exec_command', arguments: args }] })
    const completion = await openai.chat.completions.stream(chat).finalChatCompletion()
    const message = completion.choices[0]!.message
    expect(completion.choices[0]!.finish_reason).toBe('tool_calls')
    expect(message.content).toBe('Running it.')
    const call = message.tool_calls![0] as OpenAI.Chat.ChatCompletionMessageFunctionToolCall
    expect(call.function.name).toBe('exec_command')
    expect(JSON.parse(call.function.arguments)).toEqual(args)
  })

  test('the models list is in the openai dialect without anthropic-version', async () => {
    const page = await openai.models.list()
    expect(page.data.map((m) => m.id)).toEqual(['gpt-fake-1', 'gpt-fake-2'])
  })
})

describe('responses dialect', () => {
  const ask = { model: 'gpt-fake-1', input: 'Hello' }
  const instructions = 'You are a careful coding agent. '.repeat(40)
  const tools = [
    {
      type: 'function' as const,
      name: 'exec_command',
      description: 'Runs a shell command',
      parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] },
      strict: false,
    },
  ]

  /** The SSE events of a raw streamed answer, as `event:` name and parsed `data:`. */
  function parseSse(body: Buffer): { name: string; data: { type: string; sequence_number: number } }[] {
    return body
      .toString()
      .split('\n\n')
      .filter((frame) => frame.length > 0)
      .map((frame) => {
        const [eventLine, dataLine] = frame.split('\n')
        return {
          name: eventLine!.replace(/^event: /, ''),
          data: JSON.parse(dataLine!.replace(/^data: /, '')),
        }
      })
  }

  test('a non-stream response is a real-shaped response object with usage and an x-request-id', async () => {
    const { data, response } = await openai.responses.create(ask).withResponse()
    expect(data).toMatchObject({
      object: 'response',
      status: 'completed',
      model: 'gpt-fake-1',
      error: null,
      output: [
        {
          type: 'message',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: DEFAULT_TEXT, annotations: [] }],
        },
      ],
    })
    expect(data.id).toMatch(/^resp_/)
    expect(data.output[0]!.id).toMatch(/^msg_/)
    expect(data.output_text).toBe(DEFAULT_TEXT)
    const usage = data.usage!
    expect(usage.input_tokens).toBeGreaterThan(0)
    expect(usage.input_tokens_details.cached_tokens).toBe(0)
    expect(usage.output_tokens).toBe(Math.ceil(DEFAULT_TEXT.length / 4))
    expect(usage.output_tokens_details.reasoning_tokens).toBe(0)
    expect(usage.total_tokens).toBe(usage.input_tokens + usage.output_tokens)
    expect(response.headers.get('x-request-id')).toMatch(/^req_/)
  })

  test('a streamed response sends the real event sequence, numbered from 0, and the text in deltas', async () => {
    const stream = await openai.responses.create({ ...ask, stream: true })
    const types: string[] = []
    const numbers: number[] = []
    let text = ''
    let completed: OpenAI.Responses.Response | undefined
    for await (const event of stream) {
      types.push(event.type)
      numbers.push(event.sequence_number)
      if (event.type === 'response.output_text.delta') text += event.delta
      if (event.type === 'response.completed') completed = event.response
    }
    const deltas = types.filter((t) => t === 'response.output_text.delta').length
    expect(deltas).toBeGreaterThanOrEqual(3)
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      ...Array<string>(deltas).fill('response.output_text.delta'),
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ])
    expect(numbers).toEqual(types.map((_, i) => i))
    expect(text).toBe(DEFAULT_TEXT)
    expect(completed).toMatchObject({ status: 'completed', output: [{ type: 'message' }] })
    expect(completed?.usage?.output_tokens).toBe(Math.ceil(DEFAULT_TEXT.length / 4))
  })

  test('the raw stream names each event as its type, starts in_progress and ends without [DONE]', async () => {
    const res = await raw('POST', `${fake.openaiBaseUrl}/responses`, JSON.stringify({ ...ask, stream: true }))
    expect(res.headers['content-type']).toBe('text/event-stream; charset=utf-8')
    const events = parseSse(res.body)
    for (const { name, data } of events) expect(name).toBe(data.type)
    expect(events[0]!.data).toMatchObject({ response: { status: 'in_progress', output: [], usage: null } })
    expect(events.at(-1)!.name).toBe('response.completed')
    expect(res.body.toString()).not.toContain('[DONE]')
  })

  test('responses.stream() accumulates the final response and emits text snapshots', async () => {
    const snapshots: string[] = []
    const stream = openai.responses.stream(ask).on('response.output_text.delta', (event) => {
      snapshots.push(event.snapshot)
    })
    const final = await stream.finalResponse()
    expect(final.output_text).toBe(DEFAULT_TEXT)
    expect(snapshots.at(-1)).toBe(DEFAULT_TEXT)
    expect(final.usage?.total_tokens).toBeGreaterThan(0)
  })

  test('a second request sharing tools, instructions and the input prefix reads the cache', async () => {
    const first = await openai.responses.create({ ...ask, tools, instructions })
    expect(first.usage?.input_tokens_details.cached_tokens).toBe(0)
    const second = await openai.responses.create({
      ...ask,
      tools,
      instructions,
      input: [
        { role: 'user', content: 'Hello' },
        { role: 'assistant', content: first.output_text },
        { role: 'user', content: 'More' },
      ],
    })
    expect(second.usage?.input_tokens_details.cached_tokens).toBeGreaterThan(300)
    expect(second.usage!.input_tokens_details.cached_tokens).toBeLessThan(second.usage!.input_tokens)

    // Tools come first: new instructions keep only the tools' share of the prefix.
    const otherInstructions = await openai.responses.create({
      ...ask,
      tools,
      instructions: `Be terse. ${instructions}`,
    })
    const toolsOnly = otherInstructions.usage!.input_tokens_details.cached_tokens
    expect(toolsOnly).toBeGreaterThan(20)
    expect(toolsOnly).toBeLessThan(100)
    const noTools = await openai.responses.create({ ...ask, instructions })
    expect(noTools.usage?.input_tokens_details.cached_tokens).toBeLessThan(5)
  })

  test('a string input or string content reads the same cache as input_text parts', async () => {
    await openai.responses.create({ ...ask, instructions })
    const again = await openai.responses.create({
      ...ask,
      instructions,
      input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hello' }] }],
    })
    expect(again.usage!.input_tokens_details.cached_tokens).toBeGreaterThanOrEqual(
      again.usage!.input_tokens - 1,
    )
  })

  test('another prompt_cache_key or reasoning effort shares no cache with the same prefix', async () => {
    const keyed = { ...ask, instructions, prompt_cache_key: 'session-a' }
    await openai.responses.create(keyed)
    const same = await openai.responses.create(keyed)
    expect(same.usage!.input_tokens_details.cached_tokens).toBeGreaterThanOrEqual(
      same.usage!.input_tokens - 1,
    )
    const otherKey = await openai.responses.create({ ...keyed, prompt_cache_key: 'session-b' })
    expect(otherKey.usage?.input_tokens_details.cached_tokens).toBe(0)
    const otherEffort = await openai.responses.create({ ...keyed, reasoning: { effort: 'high' } })
    expect(otherEffort.usage?.input_tokens_details.cached_tokens).toBe(0)
  })

  test('previous_response_id continues a stored response, whose input and output count as cached prefix', async () => {
    const first = await openai.responses.create({ ...ask, instructions })
    const next = await openai.responses.create({
      model: 'gpt-fake-1',
      instructions,
      previous_response_id: first.id,
      input: 'And then?',
    })
    expect(next.previous_response_id).toBe(first.id)
    expect(next.usage!.input_tokens).toBeGreaterThan(first.usage!.input_tokens)
    expect(next.usage?.input_tokens_details.cached_tokens).toBeGreaterThanOrEqual(
      first.usage!.input_tokens - 1,
    )
  })

  test('an unknown or unstored previous_response_id is a 400 previous_response_not_found', async () => {
    const unstored = await openai.responses.create({ ...ask, store: false })
    for (const id of ['resp_nope', unstored.id]) {
      const err = await openai.responses.create({ ...ask, previous_response_id: id }).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(OpenAI.BadRequestError)
      const apiError = err as InstanceType<typeof OpenAI.APIError>
      expect(apiError.code).toBe('previous_response_not_found')
      expect(apiError.param).toBe('previous_response_id')
      expect(apiError.message).toContain(`Previous response with id '${id}' not found.`)
    }
  })

  test('scripted function calls are function_call items with call_id, name and JSON arguments', async () => {
    fake.enqueue({
      toolCalls: [
        { name: 'exec_command', arguments: { cmd: 'echo hi' } },
        { name: 'view_image', arguments: '{"path":"a.png"}' },
      ],
    })
    const response = await openai.responses.create({ ...ask, tools })
    expect(response.output).toMatchObject([
      { type: 'function_call', status: 'completed', name: 'exec_command', arguments: '{"cmd":"echo hi"}' },
      { type: 'function_call', status: 'completed', name: 'view_image', arguments: '{"path":"a.png"}' },
    ])
    const calls = response.output as OpenAI.Responses.ResponseFunctionToolCall[]
    expect(calls[0]!.call_id).toMatch(/^call_/)
    expect(calls[0]!.id).toMatch(/^fc_/)
    expect(new Set(calls.map((c) => c.call_id)).size).toBe(2)
    expect(response.output_text).toBe('')
  })

  test('a streamed function call arrives as argument deltas the SDK reassembles, after the scripted text', async () => {
    const args = { cmd: 'ls -la /tmp && echo a-longer-command' }
    fake.enqueue({ text: 'Listing files.', toolCalls: [{ name: 'exec_command', arguments: args }] })
    const types: string[] = []
    const stream = openai.responses.stream({ ...ask, tools }).on('event', (event) => {
      types.push(event.type)
    })
    const final = await stream.finalResponse()
    expect(final.output.map((item) => item.type)).toEqual(['message', 'function_call'])
    expect(final.output_text).toBe('Listing files.')
    const call = final.output[1] as OpenAI.Responses.ResponseFunctionToolCall
    expect(JSON.parse(call.arguments)).toEqual(args)
    expect(types.filter((t) => t === 'response.function_call_arguments.delta').length).toBeGreaterThan(1)
    expect(types).toContain('response.function_call_arguments.done')
    expect(types.at(-1)).toBe('response.completed')
  })

  test('a scripted reasoning item comes first, its encrypted_content only when include asks for it', async () => {
    fake.enqueue({ reasoning: 'Think about the shell first.', toolCalls: [{ name: 'exec_command' }] })
    fake.enqueue({ reasoning: 'Think again.' })
    const withContent = await openai.responses.create({ ...ask, include: ['reasoning.encrypted_content'] })
    expect(withContent.output.map((item) => item.type)).toEqual(['reasoning', 'function_call'])
    expect(withContent.output[0]).toMatchObject({
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: 'Think about the shell first.' }],
      encrypted_content: expect.stringMatching(/^gAAAAA/),
    })
    expect(withContent.output[0]!.id).toMatch(/^rs_/)
    expect(withContent.usage!.output_tokens_details.reasoning_tokens).toBe(
      Math.ceil('Think about the shell first.'.length / 4),
    )
    const without = await openai.responses.create(ask)
    expect(without.output.map((item) => item.type)).toEqual(['reasoning', 'message'])
    expect(without.output[0]).not.toHaveProperty('encrypted_content')
  })

  test('a streamed reasoning item sends its summary part and text events before the message', async () => {
    fake.enqueue({ reasoning: 'Think about the shell first.' })
    const types: string[] = []
    const stream = openai.responses.stream(ask).on('event', (event) => {
      types.push(event.type)
    })
    const final = await stream.finalResponse()
    expect(final.output.map((item) => item.type)).toEqual(['reasoning', 'message'])
    expect(final.output[0]).toMatchObject({ summary: [{ text: 'Think about the shell first.' }] })
    const reasoningEvents = types.slice(2, types.indexOf('response.output_item.done') + 1)
    expect(reasoningEvents[0]).toBe('response.output_item.added')
    expect(reasoningEvents[1]).toBe('response.reasoning_summary_part.added')
    expect(reasoningEvents.slice(-3)).toEqual([
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
      'response.output_item.done',
    ])
    expect(
      reasoningEvents.filter((t) => t === 'response.reasoning_summary_text.delta').length,
    ).toBeGreaterThan(1)
  })

  test('a scripted 429 surfaces as RateLimitError with the openai error envelope', async () => {
    fake.enqueue({ path: '/v1/responses', status: 429, errorMessage: 'Rate limit reached' })
    const err = await openai.responses.create(ask).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(OpenAI.RateLimitError)
    expect((err as InstanceType<typeof OpenAI.APIError>).code).toBe('rate_limit_exceeded')
    expect((err as Error).message).toContain('Rate limit reached')
  })

  test('a failMidStream script cuts the stream before response.completed; the cut is not an abort', async () => {
    fake.enqueue({ failMidStream: true })
    const stream = await openai.responses.create({ ...ask, stream: true })
    const seen: string[] = []
    const err = await (async () => {
      for await (const event of stream) seen.push(event.type)
    })().catch((e: unknown) => e)
    expect((err as Error).message).toBe('terminated')
    expect(seen).toContain('response.created')
    expect(seen).not.toContain('response.completed')
    expect(fake.aborted).toBe(0)
  })

  test('a hanging responses request aborted by the client is counted in aborted', async () => {
    fake.enqueue({ hang: true })
    const controller = new AbortController()
    const pending = openai.responses.create(ask, { signal: controller.signal }).catch((e: unknown) => e)
    await waitFor(() => fake.received.length === 1)
    controller.abort()
    expect(await pending).toBeInstanceOf(OpenAI.APIUserAbortError)
    await waitFor(() => fake.aborted === 1)
  })

  test('delayMs and chunkDelayMs slow a streamed response as they do the other dialects', async () => {
    fake.enqueue({ delayMs: 40, chunkDelayMs: 5 })
    const started = Date.now()
    await openai.responses.stream(ask).finalResponse()
    expect(Date.now() - started).toBeGreaterThanOrEqual(40 + 5 * 10)
  })
})

describe('scripts and plumbing', () => {
  test('HEAD /api/hello answers 200', async () => {
    const res = await raw('HEAD', `${fake.url}/api/hello`)
    expect(res.status).toBe(200)
  })

  test('a malformed body gets 400 in the dialect’s envelope; an unknown path gets 404', async () => {
    const bad = await raw('POST', `${fake.url}/v1/messages`, '{"model":')
    expect(bad.status).toBe(400)
    expect(JSON.parse(bad.body.toString())).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error' },
    })
    const missing = await raw('POST', `${fake.openaiBaseUrl}/nope`, '{}')
    expect(missing.status).toBe(404)
    expect(JSON.parse(missing.body.toString())).toMatchObject({ error: { type: 'invalid_request_error' } })
  })

  test('scripts are taken in FIFO order, a path script waits for its path, and reset forgets them', async () => {
    fake.enqueue({ path: '/v1/chat/completions', text: 'for openai' })
    fake.enqueue({ text: 'first' })
    fake.enqueue({ text: 'second' })
    const a = await anthropic.messages.create(hello)
    const b = await openai.chat.completions.create({ model: 'g', messages: [{ role: 'user', content: 'x' }] })
    const c = await anthropic.messages.create(hello)
    expect(a.content).toEqual([{ type: 'text', text: 'first' }])
    expect(b.choices[0]?.message.content).toBe('for openai')
    expect(c.content).toEqual([{ type: 'text', text: 'second' }])

    fake.enqueue({ text: 'forgotten' })
    fake.reset()
    expect(fake.received).toHaveLength(0)
    const d = await anthropic.messages.create(hello)
    expect(d.content).toEqual([{ type: 'text', text: DEFAULT_TEXT }])
  })

  test('delayMs holds the headers back and chunkDelayMs spaces the events', async () => {
    fake.enqueue({ delayMs: 60, chunkDelayMs: 10 })
    const started = Date.now()
    await anthropic.messages.stream(hello).finalMessage()
    expect(Date.now() - started).toBeGreaterThanOrEqual(60 + 10 * 10)
  })

  test('close() resolves while a request hangs on a kept-alive connection', async () => {
    const other = await startFakeUpstream({ latencyMs: 1 })
    const client = new Anthropic({ baseURL: other.anthropicBaseUrl, apiKey: 'test', maxRetries: 0 })
    await client.messages.create(hello)
    other.enqueue({ hang: true })
    const pending = client.messages.create(hello).catch((e: unknown) => e)
    await waitFor(() => other.received.length === 2)
    await other.close()
    expect(await pending).toBeInstanceOf(Anthropic.APIConnectionError)
    expect(other.aborted).toBe(0)
  })

  test('the runnable entry takes --script answers and --record writes each request with its key redacted', async () => {
    const root = path.resolve(__dirname, '../..')
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fake-record-'))
    const child = spawn(
      process.execPath,
      [
        '-r',
        './scripts/register.js',
        'test/support/fake-upstream-main.ts',
        '--port',
        '0',
        '--script',
        JSON.stringify({ toolCalls: [{ name: 'exec_command', arguments: { cmd: 'ls' } }] }),
        '--record',
        dir,
      ],
      { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] },
    )
    try {
      const line = await new Promise<string>((resolve, reject) => {
        child.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString().split('\n')[0]!))
        child.once('error', reject)
      })
      const url = /(http:\/\/127\.0\.0\.1:\d+)$/.exec(line)![1]!
      const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'sk-secret', maxRetries: 0 })
      const response = await client.responses.create({ model: 'gpt-fake-1', input: 'Hello' })
      expect(response.output[0]).toMatchObject({ type: 'function_call', name: 'exec_command' })
      expect(fs.readdirSync(dir)).toEqual(['001-POST-v1-responses.json'])
      const recorded = JSON.parse(fs.readFileSync(path.join(dir, '001-POST-v1-responses.json'), 'utf8'))
      expect(recorded).toMatchObject({
        method: 'POST',
        url: '/v1/responses',
        headers: { authorization: '<redacted>' },
        body: { model: 'gpt-fake-1', input: 'Hello' },
      })
      expect(JSON.stringify(recorded)).not.toContain('sk-secret')
    } finally {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      await exited
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  test('the runnable entry prints its URL first and exits on SIGTERM', async () => {
    const root = path.resolve(__dirname, '../..')
    const child = spawn(
      process.execPath,
      ['-r', './scripts/register.js', 'test/support/fake-upstream-main.ts', '--port', '0'],
      { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] },
    )
    const line = await new Promise<string>((resolve, reject) => {
      child.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString().split('\n')[0]!))
      child.once('error', reject)
    })
    const match = /^fake upstream listening on (http:\/\/127\.0\.0\.1:\d+)$/.exec(line)
    expect(match).not.toBeNull()
    const res = await raw('HEAD', `${match![1]}/api/hello`)
    expect(res.status).toBe(200)
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
    child.kill('SIGTERM')
    expect(await exited).toBe(0)
  })
})
