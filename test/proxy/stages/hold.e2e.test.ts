/**
 * The hold end to end, with the official SDKs against the fake upstream: a subtraction from
 * tools is held (the provider gets the previous tools bytes and reads its cache), an addition is
 * sent whole, a subtraction after a restart is still held from the record on disk, and
 * `holdfast why` explains it.
 */
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { scanTopLevel } from '../../../proxy/core/json-scan'
import { startProxy, type Proxy } from '../../support/harness'
import { branchShape, catBlobs, cliAsync, expectedSubjects } from '../../support/repo-checks'

let p: Proxy

beforeAll(async () => {
  p = await startProxy()
})
afterAll(async () => {
  await p.close()
})
beforeEach(() => p.fake.reset())

/** The raw bytes of the top-level `tools` value of a request body. */
function toolsSpan(body: Buffer): Buffer {
  const top = scanTopLevel(body)
  if (!top.ok) throw new Error(top.error)
  const span = top.keys.get('tools')
  if (!span) throw new Error('no tools in the body')
  return body.subarray(span.valueStart, span.valueEnd)
}

interface Meta {
  hold: { applied: boolean; reason: string; held: string[] }
  client_tools?: string[]
  usage: { cache_read_tokens: number } | null
}

/** request.json and meta.json of steps 1..n, from git. */
function committed(agent: string, n: number): { request: Buffer; meta: Meta }[] {
  const spec = (k: number, f: string) => `agents/${agent}:steps/${agent}/${String(k).padStart(3, '0')}/${f}`
  const all = Array.from({ length: n }, (_, i) => [
    spec(i + 1, 'request.json'),
    spec(i + 1, 'meta.json'),
  ]).flat()
  const blobs = catBlobs(p.repo(), all)
  const blob = (s: string): Buffer => {
    const b = blobs.get(s)
    if (!b) throw new Error(`${s} is not committed`)
    return b
  }
  return Array.from({ length: n }, (_, i) => ({
    request: blob(spec(i + 1, 'request.json')),
    meta: JSON.parse(blob(spec(i + 1, 'meta.json')).toString()) as Meta,
  }))
}

interface Why {
  step: string
  moves: { tools: boolean } | null
  hold: { applied: boolean; reason: string; held: string[] }
  summary: string[]
}

async function why(agent: string, step: string): Promise<Why> {
  const r = await cliAsync(['why', 'default', agent, step, '--home', p.home, '--json'])
  expect(r.stderr).toBe('')
  expect(r.code).toBe(0)
  return JSON.parse(r.stdout) as Why
}

describe('the hold with the anthropic SDK', () => {
  const agent = 'hold-anthropic'
  const tool = (name: string): Anthropic.Tool => ({
    name,
    description: `the ${name} tool, which does ${name}-things`,
    input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  })
  const client = (): Anthropic =>
    new Anthropic({ baseURL: `${p.url}/w/default/a/${agent}`, apiKey: 'sk-test', maxRetries: 0 })
  const turns: Anthropic.MessageParam[] = [{ role: 'user', content: 'Read the files and summarise them.' }]
  const send = (names: string[]) =>
    client().messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 64,
      system: 'You are a careful assistant.',
      tools: names.map(tool),
      messages: turns,
    })
  const grow = (answer: Anthropic.Message, next: string): void => {
    turns.push({ role: 'assistant', content: answer.content }, { role: 'user', content: next })
  }
  const promptTokens = (m: Anthropic.Message): number =>
    m.usage.input_tokens + (m.usage.cache_read_input_tokens ?? 0) + (m.usage.cache_creation_input_tokens ?? 0)

  it('holds a subtraction, sends an addition whole, and still holds after a restart', async () => {
    const r1 = await send(['a', 'b'])
    const total1 = promptTokens(r1)
    grow(r1, 'Now only the first one.')
    const r2 = await send(['a'])
    grow(r2, 'And add the c tool.')
    const r3 = await send(['a', 'c'])
    expect(p.fake.received).toHaveLength(3)
    const [got1, got2, got3] = p.fake.received.map((r) => r.body) as [Buffer, Buffer, Buffer]

    // Step 2: the client dropped b; the provider got step 1's tools bytes and read its cache.
    expect(toolsSpan(got2).equals(toolsSpan(got1))).toBe(true)
    expect(got2.length).toBeGreaterThan(got1.length)
    // Everything of step 1 but its closing bracket is a cached prefix of step 2.
    expect(r2.usage.cache_read_input_tokens ?? 0).toBeGreaterThanOrEqual(total1 - 1)
    // Step 3: c is an addition, so the composition goes whole, carrying the pending removal of b.
    expect((JSON.parse(got3.toString()) as { tools: { name: string }[] }).tools.map((t) => t.name)).toEqual([
      'a',
      'c',
    ])

    await p.settled()
    const steps = committed(agent, 3)
    expect(steps.map((s, i) => s.request.equals(p.fake.received[i]!.body))).toEqual([true, true, true])
    expect(steps[0]!.meta.hold).toEqual({ applied: false, reason: 'first-step', held: [] })
    expect(steps[1]!.meta.hold).toEqual({ applied: true, reason: 'applied', held: ['b'] })
    // The client's side of the held step: what it sent, beside the array that went upstream.
    expect(steps[1]!.meta.client_tools).toEqual(['a'])
    expect(steps[0]!.meta.client_tools).toBeUndefined()
    expect(steps[1]!.meta.usage?.cache_read_tokens).toBe(r2.usage.cache_read_input_tokens)
    expect(steps[2]!.meta.hold).toEqual({ applied: false, reason: 'not-a-sub-multiset', held: [] })

    const [why2, why3] = await Promise.all([why(agent, '002'), why(agent, '003')])
    expect(why2.hold).toEqual({ applied: true, reason: 'applied', held: ['b'] })
    expect(why2.moves?.tools).toBe(false)
    expect(why2.summary).toContain("the client dropped b; the hold re-sent step 001's array")
    expect(why3.hold.applied).toBe(false)
    expect(why3.moves?.tools).toBe(true)

    // A restart forgets everything in memory: the hold reads step 3's record from disk.
    await p.restart()
    const seen = p.fake.received.length // the fake keeps its prompt cache across our restart
    grow(r3, 'Drop c again.')
    const r4 = await send(['a'])
    const got4 = p.fake.received[seen]!.body
    expect(toolsSpan(got4).equals(toolsSpan(got3))).toBe(true)
    expect(r4.usage.cache_read_input_tokens ?? 0).toBeGreaterThanOrEqual(promptTokens(r3) - 1)
    await p.settled()
    const after = committed(agent, 4)
    expect(after[3]!.meta.hold).toEqual({ applied: true, reason: 'applied', held: ['c'] })
    expect(after[3]!.request.equals(got4)).toBe(true)
    expect((await branchShape(p.repo(), agent)).subjects).toEqual(
      expectedSubjects(agent, 4, 'claude-sonnet-4-5'),
    )
  })
})

describe('the hold with the openai SDK (system messages)', () => {
  const agent = 'hold-openai'
  const tool = (name: string): OpenAI.ChatCompletionTool => ({
    type: 'function',
    function: {
      name,
      description: `the ${name} tool, which does ${name}-things`,
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    },
  })
  const client = (): OpenAI =>
    new OpenAI({ baseURL: `${p.url}/w/default/a/${agent}/v1`, apiKey: 'sk-test', maxRetries: 0 })
  const turns: OpenAI.ChatCompletionMessageParam[] = [
    { role: 'system', content: 'You are a careful assistant.' },
    { role: 'developer', content: 'Prefer short answers.' },
    { role: 'user', content: 'Read the files and summarise them.' },
  ]
  const send = (names: string[]) =>
    client().chat.completions.create({ model: 'gpt-4o', tools: names.map(tool), messages: turns })
  const grow = (answer: OpenAI.ChatCompletion, next: string): void => {
    turns.push(
      { role: 'assistant', content: answer.choices[0]!.message.content },
      { role: 'user', content: next },
    )
  }

  it('holds a subtraction, sends an addition whole, and still holds after a restart', async () => {
    const r1 = await send(['a', 'b'])
    grow(r1, 'Now only the first one.')
    const r2 = await send(['a'])
    grow(r2, 'And add the c tool.')
    const r3 = await send(['a', 'c'])
    const [got1, got2, got3] = p.fake.received.map((r) => r.body) as [Buffer, Buffer, Buffer]
    expect(toolsSpan(got2).equals(toolsSpan(got1))).toBe(true)
    expect(r2.usage?.prompt_tokens_details?.cached_tokens ?? 0).toBeGreaterThanOrEqual(
      (r1.usage?.prompt_tokens ?? Infinity) - 1,
    )
    expect(
      (JSON.parse(got3.toString()) as { tools: { function: { name: string } }[] }).tools.map(
        (t) => t.function.name,
      ),
    ).toEqual(['a', 'c'])

    await p.settled()
    const steps = committed(agent, 3)
    expect(steps[1]!.meta.hold).toEqual({ applied: true, reason: 'applied', held: ['b'] })
    expect(steps[2]!.meta.hold).toEqual({ applied: false, reason: 'not-a-sub-multiset', held: [] })
    const w = await why(agent, '2')
    expect(w.hold.held).toEqual(['b'])
    expect(w.summary.join('\n')).toMatch(/the hold re-sent step 001's array/)

    await p.restart()
    const seen = p.fake.received.length // the fake keeps its prompt cache across our restart
    grow(r3, 'Drop c again.')
    await send(['a'])
    const got4 = p.fake.received[seen]!.body
    expect(toolsSpan(got4).equals(toolsSpan(got3))).toBe(true)
    await p.settled()
    expect(committed(agent, 4)[3]!.meta.hold).toEqual({ applied: true, reason: 'applied', held: ['c'] })
  })

  it('does not hold when the system messages changed', async () => {
    const other = 'hold-openai-system'
    const c = new OpenAI({ baseURL: `${p.url}/w/default/a/${other}/v1`, apiKey: 'sk-test', maxRetries: 0 })
    const user: OpenAI.ChatCompletionMessageParam = { role: 'user', content: 'hi' }
    await c.chat.completions.create({
      model: 'gpt-4o',
      tools: [tool('a'), tool('b')],
      messages: [{ role: 'system', content: 'one' }, user],
    })
    await c.chat.completions.create({
      model: 'gpt-4o',
      tools: [tool('a')],
      messages: [{ role: 'system', content: 'two' }, user],
    })
    expect(toolsSpan(p.fake.received[1]!.body).equals(toolsSpan(p.fake.received[0]!.body))).toBe(false)
    await p.settled()
    expect(committed(other, 2)[1]!.meta.hold).toEqual({ applied: false, reason: 'system-changed', held: [] })
  })
})
