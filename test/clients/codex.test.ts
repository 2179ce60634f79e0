/**
 * The real Codex CLI (pinned devDependency) through holdfast, in front of the fake upstream: a
 * two-step session (a scripted `exec_command` call, then the answer) is recorded as steps 001 and
 * 002 of one agent, byte for byte, with the hold's verdict, the Responses usage and the fake's
 * cache reads; `holdfast steps` reads it; the same session continued by hand with one tool fewer
 * is held. Invariant: loopback only; the run is bounded by its timeout; everything is stopped after.
 */
import { CODEX_DUMMY_KEY, runCodex } from '../support/codex'
import { gitBytes, startProxy, type Proxy } from '../support/harness'
import { cliAsync } from '../support/repo-checks'
import { outputOf, postResponses, type Item } from '../support/responses'

const WS = 'codex'
const AGENT = 'session'
let p: Proxy

beforeAll(async () => {
  p = await startProxy()
})
afterAll(async () => {
  await p.close()
})

const show = (n: string, file: string): Buffer =>
  gitBytes(p.repo(WS), 'show', `agents/${AGENT}:steps/${AGENT}/${n}/${file}`)
const meta = (n: string) => JSON.parse(show(n, 'meta.json').toString()) as Record<string, unknown>

test('a Codex session through holdfast is steps 001 and 002 of one agent with the hold verdict, usage and cache reads, and held once a tool is dropped', async () => {
  p.fake.enqueue({
    reasoning: 'The user wants the output of echo.',
    toolCalls: [{ name: 'exec_command', arguments: { cmd: 'echo holdfast-marker' } }],
  })
  p.fake.enqueue({ text: 'The command printed holdfast-marker.' })

  const run = await runCodex({
    baseUrl: `${p.url}/w/${WS}/a/${AGENT}/v1`,
    prompt: 'Run `echo holdfast-marker` and tell me what it printed.',
    timeoutMs: 60_000,
  })
  expect({ code: run.code, timedOut: run.timedOut, stderr: run.code === 0 ? '' : run.stderr }).toEqual({
    code: 0,
    timedOut: false,
    stderr: '',
  })
  expect(run.stdout.trim()).toBe('The command printed holdfast-marker.')
  await p.settled()

  expect(p.fake.received.map((r) => `${r.method} ${r.url}`)).toEqual([
    'POST /v1/responses',
    'POST /v1/responses',
  ])
  expect(p.fake.received[0]?.headers.authorization).toBe(`Bearer ${CODEX_DUMMY_KEY}`)
  for (const [i, n] of [
    [0, '001'],
    [1, '002'],
  ] as const) {
    expect(show(n, 'request.json').equals(p.fake.received[i]!.body)).toBe(true)
    expect(show(n, 'response.sse').toString()).toContain('event: response.completed')
  }
  const [m1, m2] = [meta('001'), meta('002')]
  expect(m1).toMatchObject({
    dialect: 'responses',
    status: 200,
    outcome: 'ok',
    stop_reason: 'completed',
    hold: { applied: false, reason: 'first-step' },
    route: { provider: 'openai', model: 'gpt-fake-1' },
  })
  // Codex sent the same tools again: nothing to hold, and the prefix is read from the cache.
  expect(m2).toMatchObject({ status: 200, outcome: 'ok', hold: { applied: false, reason: 'no-subtraction' } })
  const usage = m2.usage as { input_tokens: number; cache_read_tokens: number; output_tokens: number }
  expect(usage.cache_read_tokens).toBeGreaterThan(0)
  expect(usage.output_tokens).toBeGreaterThan(0)
  const headers = m1.request_headers as Record<string, string>
  expect(headers.originator).toBe('codex_exec')
  expect(headers.authorization).toBeUndefined()
  expect(JSON.stringify(m1)).not.toContain(CODEX_DUMMY_KEY)

  // The session continued by hand with one tool fewer (an MCP server gone): held.
  const body = JSON.parse(show('002', 'request.json').toString()) as { input: Item[]; tools: Item[] }
  const answer = outputOf(show('002', 'response.sse'))
  const third = {
    ...body,
    input: [
      ...body.input,
      ...answer,
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Thanks.' }] },
    ],
    tools: body.tools.filter((t) => t.name !== 'view_image'),
  }
  const res = await postResponses(`${p.url}/w/${WS}/a/${AGENT}`, third, {
    authorization: `Bearer ${CODEX_DUMMY_KEY}`,
  })
  expect(res.status).toBe(200)
  await p.settled()
  expect(meta('003')).toMatchObject({ hold: { applied: true, held: ['view_image'] } })
  const sent = JSON.parse(p.fake.received[2]!.body.toString()) as { tools: Item[] }
  expect(sent.tools).toEqual(body.tools)

  const steps = await cliAsync(['steps', WS, AGENT, '--json', '--home', p.home], { HOLDFAST_TOKEN: '' })
  expect([steps.code, steps.stderr]).toEqual([0, ''])
  const rows = JSON.parse(steps.stdout) as Record<string, unknown>[]
  expect(rows.map((r) => [r.step, r.model, r.status, r.outcome, r.hold_reason, r.held, r.state])).toEqual([
    ['001', 'gpt-fake-1', 200, 'ok', 'first-step', [], 'committed'],
    ['002', 'gpt-fake-1', 200, 'ok', 'no-subtraction', [], 'committed'],
    ['003', 'gpt-fake-1', 200, 'ok', 'applied', ['view_image'], 'committed'],
  ])
  expect(rows[1]!.cache_read).toBe(usage.cache_read_tokens)
  expect(rows[2]!.cache_read as number).toBeGreaterThan(usage.cache_read_tokens)
}, 90_000)
