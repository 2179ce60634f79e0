/**
 * proxy/telemetry through a real `holdfast serve` (spawned: the OTLP exporter loads node:http by a
 * dynamic import, which jest's module sandbox refuses), the fake upstream and a loopback OTLP
 * receiver that decodes what it is sent (protobuf for real, and JSON): one CLIENT span per step
 * with the GenAI attributes, cache reads inside the input tokens, a client's traceparent
 * continued, no content unless asked, a backend that is down costs no step and is counted in
 * health, and a backend that hangs does not hold a shutdown.
 */
import fs from 'node:fs'
import { closedPort, postAnthropic, postOpenai } from '../../support/raw-http'
import { configFor, spawnServe, type Spawned, tempHome, writeConfig } from '../../support/harness'
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream'
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../../support/otlp-receiver'
import { packageVersion } from '../../../proxy/process/package-root'
import type { HoldfastConfig } from '../../../proxy/store/config'

/** The serve's environment: no OTEL_* of the test's own; exports at once, giving up soon. */
function otelEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const k of Object.keys(env)) if (k.startsWith('OTEL_')) delete env[k]
  return { ...env, OTEL_BSP_SCHEDULE_DELAY: '20', OTEL_EXPORTER_OTLP_TIMEOUT: '500', ...extra }
}

interface Served {
  url: string
  fake: FakeUpstream
  serve: Spawned
  close(): Promise<void>
}

/** `holdfast serve` on a fresh home with `telemetry` in its holdfast.yaml. */
async function serveWith(
  telemetry: HoldfastConfig['telemetry'],
  env: Record<string, string> = {},
): Promise<Served> {
  const fake = await startFakeUpstream()
  const home = tempHome()
  writeConfig(home, configFor(fake, { telemetry }))
  const serve = await spawnServe(['--home', home, '--port', '0'], otelEnv(env))
  return {
    url: serve.url,
    fake,
    serve,
    close: async () => {
      await serve.kill()
      await fake.close()
      fs.rmSync(home, { recursive: true, force: true })
    },
  }
}

const health = async (url: string): Promise<{ telemetry: Record<string, unknown> & { failed: number } }> =>
  (await (await fetch(`${url}/_holdfast/health`)).json()) as {
    telemetry: Record<string, unknown> & { failed: number }
  }

const SECRET_PROMPT = 'the-prompt-text-nobody-should-export'

const anthropicBody = (extra: Record<string, unknown> = {}): string =>
  JSON.stringify({
    model: 'claude-sonnet-4-5',
    max_tokens: 256,
    temperature: 0.5,
    system: [{ type: 'text', text: 'You are terse. '.repeat(40), cache_control: { type: 'ephemeral' } }],
    messages: [{ role: 'user', content: SECRET_PROMPT }],
    ...extra,
  })

/** The spans received so far, waiting for at least `n`. */
async function spansAfter(r: OtlpReceiver, n: number): Promise<ReceivedSpan[]> {
  return r.waitForSpans(n)
}

describe('with a protobuf receiver (the defaults)', () => {
  let r: OtlpReceiver
  let p: Served
  beforeAll(async () => {
    r = await startOtlpReceiver()
    p = await serveWith({ endpoint: r.url })
  })
  afterAll(async () => {
    await p.close()
    await r.close()
  })

  test('an anthropic JSON step is one CLIENT span "chat <model>" with the GenAI attributes, its hold, cost and the resource', async () => {
    const res = await postAnthropic(p.url, '/v1/messages', anthropicBody(), {
      'x-claude-code-session-id': 'session-123',
    })
    expect(res.status).toBe(200)
    const answer = JSON.parse(res.body.toString()) as { id: string; model: string }
    const [s] = await spansAfter(r, 1)
    expect(r.errors).toEqual([])
    expect(r.exports[0]?.contentType).toBe('application/x-protobuf')
    expect(s?.name).toBe('chat claude-sonnet-4-5')
    expect(s?.kind).toBe(3)
    expect(s?.parentSpanId).toBe('')
    expect(s?.resource['service.name']).toBe('holdfast')
    expect(s?.resource['service.version']).toBe(packageVersion())
    expect(s?.endNs).toBeGreaterThanOrEqual(s?.startNs as bigint)
    const a = s?.attributes ?? {}
    expect(a).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.request.model': 'claude-sonnet-4-5',
      'gen_ai.response.model': answer.model,
      'gen_ai.response.id': answer.id,
      'gen_ai.response.finish_reasons': ['end_turn'],
      'gen_ai.request.max_tokens': 256,
      'gen_ai.request.temperature': 0.5,
      'gen_ai.request.stream': false,
      'gen_ai.conversation.id': 'session-123',
      'server.address': '127.0.0.1',
      'server.port': Number(new URL(p.fake.anthropicBaseUrl).port),
      'holdfast.workspace': 'default',
      'holdfast.agent': expect.stringMatching(/^main/), // a short tool-less request goes to main.aux
      'holdfast.step': '001',
      'holdfast.hold': 'not-held',
    })
    expect(typeof a['gen_ai.response.time_to_first_chunk']).toBe('number')
    expect(typeof a['holdfast.cost_usd']).toBe('number')
    expect(a['holdfast.commit']).toMatch(/^[0-9a-f]{40}$/)
    expect(a['error.type']).toBeUndefined()
    expect(a['gen_ai.usage.cache_write.input_tokens']).toBeUndefined()
  })

  test('cache reads and writes are counted inside gen_ai.usage.input_tokens, and named apart', async () => {
    const before = r.spans().length
    const res = await postAnthropic(p.url, '/v1/messages', anthropicBody())
    const u = (JSON.parse(res.body.toString()) as { usage: Record<string, number> }).usage
    const spans = await spansAfter(r, before + 1)
    const a = spans[before]?.attributes ?? {}
    expect(u.cache_read_input_tokens).toBeGreaterThan(0)
    expect(a['gen_ai.usage.input_tokens']).toBe(
      (u.input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0),
    )
    expect(a['gen_ai.usage.cache_read.input_tokens']).toBe(u.cache_read_input_tokens)
    expect(a['gen_ai.usage.cache_creation.input_tokens']).toBe(u.cache_creation_input_tokens)
    expect(a['gen_ai.usage.output_tokens']).toBe(u.output_tokens)
  })

  test("an SSE step's span says it streamed and carries the stream's usage and stop reason", async () => {
    const before = r.spans().length
    const res = await postAnthropic(p.url, '/v1/messages', anthropicBody({ stream: true }))
    expect(res.status).toBe(200)
    expect(res.body.toString()).toContain('message_stop')
    const a = (await spansAfter(r, before + 1))[before]?.attributes ?? {}
    expect(a['gen_ai.request.stream']).toBe(true)
    expect(a['gen_ai.response.finish_reasons']).toEqual(['end_turn'])
    expect(a['gen_ai.response.id']).toMatch(/^msg_/)
    expect(a['gen_ai.usage.output_tokens']).toBeGreaterThan(0)
    expect(a['gen_ai.response.time_to_first_chunk']).toBeGreaterThanOrEqual(0)
  })

  test('an openai chat step and a responses step are spans of provider openai', async () => {
    const before = r.spans().length
    const chat = await postOpenai(
      p.url,
      '/v1/chat/completions',
      JSON.stringify({ model: 'gpt-4.1', top_p: 0.9, messages: [{ role: 'user', content: 'hi' }] }),
    )
    expect(chat.status).toBe(200)
    await spansAfter(r, before + 1)
    const responses = await postOpenai(
      p.url,
      '/v1/responses',
      JSON.stringify({ model: 'gpt-5', max_output_tokens: 100, input: 'hello' }),
      { session_id: 'codex-thread-7' },
    )
    expect(responses.status).toBe(200)
    const spans = await spansAfter(r, before + 2)
    const [c, rs] = [spans[before]?.attributes ?? {}, spans[before + 1]?.attributes ?? {}]
    expect(c).toMatchObject({
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4.1',
      'gen_ai.request.top_p': 0.9,
    })
    expect(typeof c['gen_ai.usage.input_tokens']).toBe('number')
    expect(rs).toMatchObject({
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-5',
      'gen_ai.request.max_tokens': 100,
      'gen_ai.conversation.id': 'codex-thread-7',
    })
    expect(rs['gen_ai.response.id']).toBe((JSON.parse(responses.body.toString()) as { id: string }).id)
    expect(spans[before + 1]?.name).toBe('chat gpt-5')
  })

  test("a client's traceparent makes the step's span its child, and goes upstream as it came", async () => {
    const before = r.spans().length
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736'
    const parent = '00f067aa0ba902b7'
    const traceparent = `00-${traceId}-${parent}-01`
    await postAnthropic(p.url, '/v1/messages', anthropicBody(), { traceparent, tracestate: 'vendor=x' })
    const s = (await spansAfter(r, before + 1))[before]
    expect(s?.traceId).toBe(traceId)
    expect(s?.parentSpanId).toBe(parent)
    expect(s?.spanId).not.toBe(parent)
    expect(s?.traceState).toBe('vendor=x')
    expect(p.fake.received.at(-1)?.headers.traceparent).toBe(traceparent)
  })

  test("each step's span names its cache cause: first_step, then the system prompt that changed, then no_miss", async () => {
    const before = r.spans().length
    const agent = { 'x-holdfast-agent': 'causes' }
    const tools = [{ name: 'Read', description: 'read a file', input_schema: { type: 'object' } }]
    const turn = (system: string, n: number) =>
      anthropicBody({
        tools,
        system: [{ type: 'text', text: system.repeat(60) }],
        messages: Array.from({ length: n }, (_, k) => ({
          role: k % 2 ? 'assistant' : 'user',
          content: `turn ${k}`,
        })),
      })
    await postAnthropic(p.url, '/v1/messages', turn('You are terse. ', 1), agent)
    await postAnthropic(p.url, '/v1/messages', turn('You are brief. ', 3), agent)
    await postAnthropic(p.url, '/v1/messages', turn('You are brief. ', 5), agent)
    const spans = (await spansAfter(r, before + 3)).slice(before)
    expect(spans.map((s) => s.attributes['holdfast.cause'])).toEqual([
      'first_step',
      'system_prompt_changed',
      'no_miss',
    ])
  })

  test('no prompt or answer text is on a span without capture_content', async () => {
    const everything = JSON.stringify(r.spans(), (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))
    expect(everything).not.toContain(SECRET_PROMPT)
    expect(everything).not.toContain('gen_ai.input.messages')
    expect(everything).not.toContain('gen_ai.output.messages')
    expect(everything).not.toContain('sk-test')
  })

  test('the health says what the backend took', async () => {
    const h = await health(p.url)
    expect(h.telemetry).toMatchObject({
      endpoint: `${r.url}/v1/traces`,
      protocol: 'http/protobuf',
      dropped: 0,
      failed: 0,
    })
    expect(h.telemetry.exported).toBeGreaterThan(0)
  })
})

test('with capture_content, http/json and semconv latest: the prompt and the answer are on the span as JSON strings, cache writes under cache_write', async () => {
  const r = await startOtlpReceiver()
  const p = await serveWith({
    endpoint: r.url,
    protocol: 'http/json',
    capture_content: true,
    semconv: 'latest',
  })
  try {
    const res = await postAnthropic(p.url, '/v1/messages', anthropicBody())
    const answer = JSON.parse(res.body.toString()) as { content: { text: string }[] }
    const [s] = await r.waitForSpans(1)
    expect(r.exports[0]?.contentType).toContain('application/json')
    const a = s?.attributes ?? {}
    const input = JSON.parse(a['gen_ai.input.messages'] as string) as unknown
    expect(input).toEqual([{ role: 'user', content: SECRET_PROMPT }])
    expect(a['gen_ai.system_instructions']).toContain('You are terse.')
    const output = JSON.parse(a['gen_ai.output.messages'] as string) as { role: string; parts: unknown[] }[]
    expect(output[0]?.role).toBe('assistant')
    expect(output[0]?.parts).toContainEqual({ type: 'text', content: answer.content[0]?.text })
    expect(a['gen_ai.usage.cache_write.input_tokens']).toEqual(expect.any(Number))
    expect(a['gen_ai.usage.cache_creation.input_tokens']).toBeUndefined()
  } finally {
    await p.close()
    await r.close()
  }
})

test('with the receiver down steps still answer, and health counts the spans lost', async () => {
  const port = await closedPort()
  const p = await serveWith({ endpoint: `http://127.0.0.1:${port}` })
  try {
    const res = await postAnthropic(p.url, '/v1/messages', anthropicBody())
    expect(res.status).toBe(200)
    let h = await health(p.url)
    for (let i = 0; i < 100 && h.telemetry.failed === 0; i++) {
      await new Promise((w) => setTimeout(w, 100))
      h = await health(p.url)
    }
    expect(h.telemetry).toMatchObject({ failed: 1, dropped: 0, exported: 0 })
    expect(p.serve.stderr()).toContain('exporting spans')
  } finally {
    await p.close()
  }
}, 20_000)

test('a shutdown while the receiver hangs returns within a few seconds', async () => {
  const r = await startOtlpReceiver()
  r.hang = true
  // The exporter itself would wait a minute for the receiver.
  const p = await serveWith({ endpoint: r.url }, { OTEL_EXPORTER_OTLP_TIMEOUT: '60000' })
  try {
    await postAnthropic(p.url, '/v1/messages', anthropicBody())
    for (let i = 0; i < 250 && r.requests === 0; i++) await new Promise((w) => setTimeout(w, 20))
    expect(r.requests).toBeGreaterThan(0)
    const t0 = Date.now()
    await p.serve.kill('SIGTERM')
    expect(Date.now() - t0).toBeLessThan(5000)
  } finally {
    await p.close()
    await r.close()
  }
}, 20_000)
