/**
 * The official SDKs through the proxy, against the fake upstream: every call works as it would
 * direct, and each one is one recorded step and one commit whose request.json is exactly the
 * bytes the provider received.
 */
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { git, gitBytes, startProxy, type Proxy } from '../support/harness'

let p: Proxy

beforeAll(async () => {
  p = await startProxy()
})
afterAll(async () => {
  await p.close()
})
beforeEach(() => p.fake.reset())

const commits = (agent: string, ws = 'default'): string[] =>
  git(p.repo(ws), 'log', '--format=%s', `agents/${agent}`).trim().split('\n')

describe('the anthropic SDK through the proxy', () => {
  it('gets the answer of a non-streaming call and the step is committed with the exact bytes sent', async () => {
    const client = new Anthropic({ baseURL: `${p.url}/w/default/a/sdk1`, apiKey: 'sk-test', maxRetries: 0 })
    const msg = await client.messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'hello' }],
    })
    expect(msg.content[0]).toMatchObject({ type: 'text', text: 'Hello from the fake upstream.' })
    await p.settled()
    expect(commits('sdk1')).toEqual(['step 001: claude-sonnet-4-5 [sdk1]', 'config: starter providers.yaml'])
    const recorded = gitBytes(p.repo(), 'show', 'agents/sdk1:steps/sdk1/001/request.json')
    expect(recorded.equals(p.fake.received[0]?.body as Buffer)).toBe(true)
  })

  it('streams events through and records the raw stream as response.sse', async () => {
    const client = new Anthropic({ baseURL: `${p.url}/w/default/a/sdk2`, apiKey: 'sk-test', maxRetries: 0 })
    const stream = client.messages.stream({
      model: 'claude-sonnet-4-5',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'hello' }],
    })
    const final = await stream.finalMessage()
    expect(final.stop_reason).toBe('end_turn')
    await p.settled()
    const sse = git(p.repo(), 'show', 'agents/sdk2:steps/sdk2/001/response.sse')
    expect(sse).toContain('event: message_start')
    expect(sse).toContain('event: ping')
    const meta = JSON.parse(git(p.repo(), 'show', 'agents/sdk2:steps/sdk2/001/meta.json'))
    expect(meta).toMatchObject({
      status: 200,
      outcome: 'ok',
      stop_reason: 'end_turn',
      response_file: 'response.sse',
    })
    expect(meta.usage).toMatchObject({ output_tokens: expect.any(Number) })
    expect(meta.ttfb_ms).toBeGreaterThan(0)
  })

  it('never writes the API key into a record', async () => {
    const client = new Anthropic({
      baseURL: `${p.url}/w/default/a/sdk3`,
      apiKey: 'sk-secret-123',
      maxRetries: 0,
    })
    await client.messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 8,
      messages: [{ role: 'user', content: 'x' }],
    })
    await p.settled()
    const sent = p.fake.received[0]?.headers
    expect([sent?.['x-api-key'], sent?.authorization]).toContain(
      sent?.['x-api-key'] === undefined ? 'Bearer sk-secret-123' : 'sk-secret-123',
    )
    const all = git(p.repo(), 'show', 'agents/sdk3')
    expect(all).not.toContain('sk-secret-123')
  })
})

describe('the openai SDK through the proxy', () => {
  it('gets the answer of a non-streaming call and records usage with cached tokens', async () => {
    const client = new OpenAI({ baseURL: `${p.url}/w/default/a/oai1/v1`, apiKey: 'sk-test', maxRetries: 0 })
    const res = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'hello' }],
    })
    expect(res.choices[0]?.message.content).toBe('Hello from the fake upstream.')
    expect(p.fake.received[0]?.url).toBe('/v1/chat/completions')
    await p.settled()
    const meta = JSON.parse(git(p.repo(), 'show', 'agents/oai1:steps/oai1/001/meta.json'))
    expect(meta).toMatchObject({ dialect: 'openai', status: 200, stop_reason: 'stop' })
    expect(meta.usage).not.toBeNull()
  })

  it('streams chunks through; usage is null when the client did not ask for it', async () => {
    const client = new OpenAI({ baseURL: `${p.url}/w/default/a/oai2/v1`, apiKey: 'sk-test', maxRetries: 0 })
    const stream = await client.chat.completions.create({
      model: 'gpt-4o',
      stream: true,
      messages: [{ role: 'user', content: 'hello' }],
    })
    let text = ''
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? ''
    expect(text).toBe('Hello from the fake upstream.')
    await p.settled()
    const meta = JSON.parse(git(p.repo(), 'show', 'agents/oai2:steps/oai2/001/meta.json'))
    expect(meta.usage).toBeNull()
    expect(meta.response_file).toBe('response.sse')
  })

  it('streams with include_usage and records the usage chunk', async () => {
    const client = new OpenAI({ baseURL: `${p.url}/w/default/a/oai3/v1`, apiKey: 'sk-test', maxRetries: 0 })
    const stream = await client.chat.completions.create({
      model: 'gpt-4o',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'hello' }],
    })
    for await (const _ of stream) void _
    await p.settled()
    const meta = JSON.parse(git(p.repo(), 'show', 'agents/oai3:steps/oai3/001/meta.json'))
    expect(meta.usage).toMatchObject({ output_tokens: expect.any(Number) })
  })
})
