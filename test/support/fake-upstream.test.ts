/**
 * Tests of the fake upstream itself, driven by the real SDK clients pointed straight at it (no proxy).
 * Invariant: what the SDKs accept here is what the proxy's integration tests may rely on.
 */
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { spawn } from 'node:child_process'
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

  test('a scripted tool_use streams as input_json_delta pieces and the message stops with tool_use', async () => {
    const call = { type: 'tool_use' as const, id: 'toolu_1', name: 'Agent', input: { prompt: 'look' } }
    fake.enqueue({ content: [{ type: 'text', text: 'On it.' }, call] })
    const message = await anthropic.messages.stream(hello).finalMessage()
    expect(message.content).toMatchObject([{ type: 'text', text: 'On it.' }, call])
    expect(message.stop_reason).toBe('tool_use')
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

  test('the models list is in the openai dialect without anthropic-version', async () => {
    const page = await openai.models.list()
    expect(page.data.map((m) => m.id)).toEqual(['gpt-fake-1', 'gpt-fake-2'])
  })

  test('responses.create gets a minimal completed response', async () => {
    const response = await openai.responses.create({ model: 'gpt-fake-1', input: 'Hello' })
    expect(response.status).toBe('completed')
    expect(response.output_text).toBe(DEFAULT_TEXT)
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

  test('the runnable entry prints its URL first and exits on SIGTERM', async () => {
    const root = path.resolve(__dirname, '../..')
    const child = spawn(
      process.execPath,
      ['-r', './test/support/register.js', 'test/support/fake-upstream-main.ts', '--port', '0'],
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
