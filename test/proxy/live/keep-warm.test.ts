/**
 * Keep-warm (live/keep-warm): an idle agent whose last step left a cached prefix is pinged after
 * `after_s` with its last request (max_tokens 1, no stream), recorded on its `.aux` sibling, at
 * most `max_pings` times per idle period; never while it has a step in flight; a step below
 * `min_tokens` is not kept warm. Short real timers stand in for minutes.
 */
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream'
import { eventually, git, startProxy, type Proxy } from '../../support/harness'
import { KEY_ENV, mainStep, sendStep } from '../../support/view-demo'

let fake: FakeUpstream
let p: Proxy
const AFTER_S = 0.3
beforeAll(async () => {
  process.env[KEY_ENV] = 'sk-warm'
  fake = await startFakeUpstream()
  p = await startProxy({
    fake,
    config: {
      // The ping needs a row that adds the operator's key: the client's was never recorded.
      providers: {
        anthropic: { dialect: 'anthropic', base_url: fake.anthropicBaseUrl, api_key_env: KEY_ENV },
      },
      hold: { keep_warm: { after_s: AFTER_S, max_pings: 2, min_tokens: 100 } },
    },
  })
})
afterAll(async () => {
  await p.close()
  await fake.close()
})

/** A step as a client of a keyed row sends it: holdfast's token as its API key. */
const send = (agent: string, body: Record<string, unknown>) =>
  sendStep(p, 'warm', agent, body, { 'x-api-key': p.token })
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const pings = (): { max_tokens: number; stream: boolean; system: unknown }[] =>
  fake.received
    .map((r) => JSON.parse(r.body.toString()) as { max_tokens: number; stream: boolean; system: unknown })
    .filter((b) => b.max_tokens === 1)
const auxSteps = (agent: string): string[] => {
  try {
    return git(p.repo('warm'), 'ls-tree', '--name-only', `agents/${agent}.aux`, `steps/${agent}.aux/`)
      .trim()
      .split('\n')
  } catch {
    return []
  }
}

test('an idle agent is pinged at most max_pings times with its last request, recorded on its .aux sibling', async () => {
  const step = mainStep(1, ['Read', 'Write'])
  expect((await send('main', step)).status).toBe(200)
  await eventually(() => pings().length === 2, 10_000)
  await sleep(AFTER_S * 1000 * 3)
  expect(pings()).toHaveLength(2)
  expect(pings()[0]).toMatchObject({ max_tokens: 1, stream: false, system: step.system })
  await p.settled()
  expect(auxSteps('main')).toEqual(['steps/main.aux/001', 'steps/main.aux/002'])
  const meta = JSON.parse(git(p.repo('warm'), 'show', 'agents/main.aux:steps/main.aux/002/meta.json')) as {
    usage: { cache_read_tokens: number }
    cost: { usd: number }
  }
  expect(meta.usage.cache_read_tokens).toBeGreaterThan(0)
  expect(meta.cost.usd).toBeGreaterThan(0)
})

test('no ping goes while the agent has a step in flight; its end starts a new idle period', async () => {
  fake.reset()
  fake.enqueue({ delayMs: AFTER_S * 1000 * 4 })
  expect((await send('slow', mainStep(1, ['Read']))).status).toBe(200)
  // The step took longer than after_s: nothing was pinged while it was in flight.
  expect(pings()).toHaveLength(0)
  await eventually(() => pings().length === 2, 10_000)
})

test('a step that left less than min_tokens in the cache is not kept warm', async () => {
  fake.reset()
  const tiny = { model: 'claude-sonnet-4-5', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }
  expect((await send('tiny', tiny)).status).toBe(200)
  await sleep(AFTER_S * 1000 * 4)
  expect(pings()).toHaveLength(0)
})
