/**
 * The real Codex CLI (pinned devDependency) against the fake upstream directly, no holdfast yet:
 * what it sends for a two-step session (a scripted shell call, then the answer) and what it needs
 * back. Invariant: loopback only; each run is bounded by its timeout and the fake is closed after.
 */
import { CODEX_DUMMY_KEY, CODEX_VERSION, runCodex } from '../support/codex'
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream'

type Item = {
  type?: string
  role?: string
  name?: string
  call_id?: string
  output?: string
  encrypted_content?: string
}
type Body = {
  model: string
  stream: boolean
  store: boolean
  include: string[]
  input: Item[]
  tools: { name?: string }[]
}

let fake: FakeUpstream

beforeAll(async () => {
  fake = await startFakeUpstream()
})

afterAll(async () => {
  await fake.close()
})

beforeEach(() => fake.reset())

const bodies = (): Body[] => fake.received.map((r) => JSON.parse(r.body.toString()) as Body)

test('the pinned Codex CLI is the version the fixtures were captured with', () => {
  expect(CODEX_VERSION).toBe('0.171.0')
})

test('a function call then an answer is two streamed Responses requests, the second appending reasoning, call and output', async () => {
  fake.enqueue({
    reasoning: 'The user wants the output of echo.',
    toolCalls: [{ name: 'exec_command', arguments: { cmd: 'echo holdfast-marker' } }],
  })
  fake.enqueue({ text: 'The command printed holdfast-marker.' })

  const run = await runCodex({
    baseUrl: fake.openaiBaseUrl,
    prompt: 'Run `echo holdfast-marker` and tell me what it printed.',
    timeoutMs: 60_000,
  })

  expect({ code: run.code, timedOut: run.timedOut, stderr: run.code === 0 ? '' : run.stderr }).toEqual({
    code: 0,
    timedOut: false,
    stderr: '',
  })
  expect(run.stdout.trim()).toBe('The command printed holdfast-marker.')
  expect(fake.received.map((r) => `${r.method} ${r.url}`)).toEqual([
    'POST /v1/responses',
    'POST /v1/responses',
  ])

  const [first, second] = bodies()
  expect(first).toMatchObject({ model: 'gpt-fake-1', stream: true, store: false })
  expect(first!.tools.map((t) => t.name)).toContain('exec_command')
  // Stateless: the whole conversation is sent again, the first request's input unchanged as its prefix.
  expect(second!.input.slice(0, first!.input.length)).toEqual(first!.input)
  const added = second!.input.slice(first!.input.length)
  expect(added.map((i) => i.type)).toEqual(['reasoning', 'function_call', 'function_call_output'])
  // The reasoning item goes back with the opaque content the fake sent (include asked for it).
  expect(first!.include).toContain('reasoning.encrypted_content')
  expect(added[0]!.encrypted_content).toMatch(/^gAAAAA/)
  expect(added[1]).toMatchObject({ name: 'exec_command', call_id: 'call_fake000001_0' })
  expect(added[2]!.call_id).toBe('call_fake000001_0')
  expect(added[2]!.output).toContain('holdfast-marker')

  for (const { headers } of fake.received) {
    expect(headers.authorization).toBe(`Bearer ${CODEX_DUMMY_KEY}`)
    expect(headers.originator).toBe('codex_exec')
    expect(headers['user-agent']).toContain(`codex_exec/${CODEX_VERSION}`)
  }
  expect(fake.received[1]!.headers['session-id']).toBe(fake.received[0]!.headers['session-id'])
})

test('a stream cut before response.completed fails the run (no retries configured) after one request', async () => {
  fake.enqueue({ failMidStream: true })

  const run = await runCodex({ baseUrl: fake.openaiBaseUrl, prompt: 'Say hello.', timeoutMs: 60_000 })

  expect(run.timedOut).toBe(false)
  expect(run.code).not.toBe(0)
  expect(run.stderr).toContain('stream disconnected before completion')
  expect(fake.received).toHaveLength(1)
})
