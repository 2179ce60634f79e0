/**
 * `holdfast steps` and `holdfast agents` with keep-warm pings: a ping is a row of `<agent>.aux`
 * saying which step it kept warm; the step it kept warm shows its pings and what they saved; the
 * agent's row shows its pings, what they cost and what they saved. Short real timers and a short
 * cache lifetime (`hold.ttl_ms`) stand in for minutes: the user comes back after the lifetime of
 * the step the pings kept warm, within the last ping's.
 */
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream'
import { eventually, startProxy, type Proxy } from '../support/harness'
import { KEY_ENV, mainStep, sendStep } from '../support/view-demo'
import { cliInProcess } from '../proxy/tools/support'
import type { AgentRow } from '../../cli/agents'
import type { StepRow } from '../../cli/steps'

let fake: FakeUpstream
let p: Proxy
const TTL_MS = 800
const PRICES = { 'claude-sonnet-4-5': { input: 3, output: 15, cache_write: 3.75, cache_read: 0.3 } }
const pings = (): number =>
  fake.received.filter((r) => (JSON.parse(r.body.toString()) as { max_tokens: number }).max_tokens === 1)
    .length
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

beforeAll(async () => {
  process.env[KEY_ENV] = 'sk-warm'
  fake = await startFakeUpstream()
  p = await startProxy({
    fake,
    config: {
      providers: {
        anthropic: { dialect: 'anthropic', base_url: fake.anthropicBaseUrl, api_key_env: KEY_ENV },
      },
      prices: PRICES,
      hold: { ttl_ms: TTL_MS, keep_warm: { after_s: 0.3, max_pings: 3, min_tokens: 100 } },
    },
  })
  const send = (i: number) =>
    sendStep(p, 'warm', 'main', mainStep(i, ['Read', 'Write']), { 'x-api-key': p.token })
  const first = Date.now()
  expect((await send(1)).status).toBe(200)
  // Three pings, then back: past step 001's lifetime, within the last ping's.
  await eventually(() => pings() === 3, 10_000)
  await sleep(Math.max(0, TTL_MS + 100 - (Date.now() - first)))
  expect((await send(2)).status).toBe(200)
  // Step 002 is not kept warm in turn: the figures below are step 001's pings (a slow machine
  // would otherwise ping 002 before the reports ran).
  p.server.ctx.keepWarm?.close()
  await p.settled()
}, 30_000)
afterAll(async () => {
  await p.close()
  await fake.close()
})

const json = async <T>(...args: string[]): Promise<T> =>
  JSON.parse((await cliInProcess([...args, '--json', '--home', p.home])).stdout) as T

test('a ping is a row of the .aux sibling naming the step it kept warm', async () => {
  const rows = await json<StepRow[]>('steps', 'warm', 'main.aux')
  expect(rows.map((r) => r.ping_of)).toEqual(['001', '001', '001'])
  expect(rows.every((r) => (r.cost_usd ?? 0) > 0)).toBe(true)
})

test('the step the pings kept warm shows them, and the next step’s reads saved at write − read', async () => {
  const rows = await json<StepRow[]>('steps', 'warm', 'main')
  const aux = await json<StepRow[]>('steps', 'warm', 'main.aux')
  const w = rows[0]!.keep_warm!
  expect(w).toMatchObject({ step: '001', pings: 3, next: '002', unpriced: 0 })
  expect(w.cost_usd).toBeCloseTo(
    aux.reduce((a, r) => a + (r.cost_usd ?? 0), 0),
    6,
  )
  expect(w.saved_tokens).toBeGreaterThan(0)
  expect(w.saved_tokens).toBeLessThanOrEqual(rows[1]!.cache_read!)
  expect(w.saved_usd).toBeCloseTo((w.saved_tokens * (3.75 - 0.3)) / 1e6, 6)
  expect(rows[1]!.keep_warm).toBeUndefined()
  const text = (await cliInProcess(['steps', 'warm', 'main', '--home', p.home])).stdout
  expect(text.split('\n')[0]).toMatch(/ hold saved +pings +warm saved +ttfb /)
  expect(text).toContain(
    `keep-warm: 3 pings cost $${w.cost_usd.toFixed(4)}, warm saved $${w.saved_usd!.toFixed(4)} (${w.saved_tokens.toLocaleString('en-US')} cache writes the pings avoided) (the pings are steps of main.aux)`,
  )
  const auxText = (await cliInProcess(['steps', 'warm', 'main.aux', '--home', p.home])).stdout
  if (process.env.HOLDFAST_SHOW)
    process.stdout.write(text + auxText + (await cliInProcess(['agents', 'warm', '--home', p.home])).stdout)
  expect(auxText.split('\n')[1]).toMatch(/ of 001 /)
})

test('the agent’s row counts its pings, what they cost and what they saved; the .aux row’s cost has them too', async () => {
  const rows = await json<AgentRow[]>('agents', 'warm')
  const main = rows.find((r) => r.agent === 'main')!
  const aux = rows.find((r) => r.agent === 'main.aux')!
  expect(main.keep_warm).toMatchObject({ pings: 3, unpriced: 0, unpriced_savings: 0 })
  expect(main.keep_warm!.cost_usd).toBeCloseTo(aux.cost_usd, 6)
  expect(main.keep_warm!.saved_usd).toBeGreaterThan(0)
  expect(aux.keep_warm).toBeUndefined()
  const text = (await cliInProcess(['agents', 'warm', '--home', p.home])).stdout
  expect(text.split('\n')[0]).toMatch(/ hold saved +pings +pings cost +warm saved$/)
  expect(text).toMatch(
    new RegExp(
      `\\n\\s*main .* 3 +\\$${main.keep_warm!.cost_usd.toFixed(4)} +\\$${main.keep_warm!.saved_usd.toFixed(4)}\\n`,
    ),
  )
})
