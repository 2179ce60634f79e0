/**
 * The command line over a Responses conversation recorded through the proxy (the CLI spawned, the
 * server in-process, the fake upstream behind it): `steps` and `why` read it (the hold, the cache
 * reads, the first difference in Responses cache order), `replay` runs a plugin over it, and
 * `attempt` and `dispatch` fork it from a Responses notch into an attempt that continues the
 * conversation in Responses items, routed by a role on an openai row.
 */
import { NOT_RUN } from '../../proxy/core/continuation'
import { setRole } from '../../proxy/store/config/edit'
import { openRepo } from '../../proxy/store/git'
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream'
import { git, startProxy, type Proxy } from '../support/harness'
import { cliAsync, type Run } from '../support/repo-checks'
import {
  callOutputs,
  codexLike,
  developer,
  fn,
  type Item,
  outputOf,
  postResponses,
  user,
} from '../support/responses'
import { EXAMPLE } from '../plugins/support'

const WS = 'rcli'
const KEY_ENV = 'HF_RESPONSES_KEY'
process.env[KEY_ENV] = 'sk-attempt'

let fake: FakeUpstream
let p: Proxy
const step: Item[] = []
const tools = [fn('exec_command'), fn('fs_grep')]

beforeAll(async () => {
  fake = await startFakeUpstream()
  p = await startProxy({
    fake,
    config: {
      providers: {
        keyedai: { dialect: 'openai', base_url: fake.openaiBaseUrl, api_key_env: KEY_ENV },
        keyed: { dialect: 'anthropic', base_url: fake.anthropicBaseUrl, api_key_env: KEY_ENV },
      },
    },
  })
  const base = `${p.url}/w/${WS}/a/main`
  const first = [developer('You are a coding agent.'), user('<environment_context/>'), user('Run ls.')]
  fake.enqueue({
    reasoning: 'List the files.',
    toolCalls: [{ name: 'exec_command', arguments: { cmd: 'ls' } }],
  })
  step.push(codexLike(first, tools))
  const one = await postResponses(base, step[0])
  const output = outputOf(one.bytes)
  const second = [...first, ...output, ...callOutputs(output, 'a.txt')]
  fake.enqueue({ text: 'There is a.txt.' })
  step.push(codexLike(second, [tools[0]!]))
  const two = await postResponses(base, step[1])
  // Step 3: the developer prompt was edited (a new session would do that).
  const third = [developer('You are a careful coding agent.'), ...second.slice(1), ...outputOf(two.bytes)]
  step.push(codexLike([...third, user('Thanks.')], [tools[0]!]))
  await postResponses(base, step[2])
  await p.settled()
  const rows = p.server.ctx.config.providers
  const ws = openRepo(p.repo(WS))
  await setRole(ws, 'default', 'gptrev', { provider: 'keyedai', model: 'gpt-5-mini' }, rows)
  await setRole(ws, 'default', 'sonnet', { provider: 'keyed', model: 'claude-sonnet-4-5' }, rows)
}, 30_000)
afterAll(async () => {
  await p.close()
  await fake.close()
})

const run = (...args: string[]): Promise<Run> =>
  cliAsync([...args, '--home', p.home], { HOLDFAST_TOKEN: '', [KEY_ENV]: 'sk-attempt' })

function ok(r: Run): string {
  expect(r.stderr).toBe('')
  expect(r.code).toBe(0)
  return r.stdout
}

describe('reading a responses conversation', () => {
  it('lists its steps, explains the hold and the first difference in Responses cache order, and replays a plugin', async () => {
    const [json, table, why2, why3, replay] = await Promise.all([
      run('steps', WS, 'main', '--json'),
      run('steps', WS, 'main'),
      run('why', WS, 'main', '002', '--json'),
      run('why', WS, 'main', '003', '--json'),
      run('replay', '--plugin', EXAMPLE, '--options', '{"role":"big","threshold":5}', WS, 'main', '--json'),
    ])
    const rows = JSON.parse(ok(json!)) as Record<string, unknown>[]
    expect(rows.map((r) => [r.step, r.model, r.status, r.hold_reason, r.held])).toEqual([
      ['001', 'gpt-5', 200, 'first-step', []],
      ['002', 'gpt-5', 200, 'applied', ['fs_grep']],
      ['003', 'gpt-5', 200, 'system-changed', []],
    ])
    expect(rows[1]!.cache_read as number).toBeGreaterThan(0)
    expect(rows[0]!.cost_usd as number).toBeGreaterThan(0)
    expect(ok(table!)).toMatch(/^002 .* gpt-5 +200 +fs_grep .*committed$/m)

    const held = JSON.parse(ok(why2!)) as { moves: object; summary: string[] }
    expect(held.moves).toMatchObject({ model: false, tools: false, system: false, head: false, keying: [] })
    expect(held.summary).toContain("the client dropped fs_grep; the hold re-sent step 001's array")
    const moved = JSON.parse(ok(why3!)) as { moves: { firstDifference: string }; summary: string[] }
    expect(moved.moves).toMatchObject({ system: true, head: false })
    expect(moved.summary).toEqual(
      expect.arrayContaining([
        'moved since 002: tools, system',
        expect.stringMatching(/^first difference in cache order: tools\[1\], at character 0$/),
        'hold not applied (system-changed): the prefix moved anyway, so the tools went out with that miss',
      ]),
    )

    const decided = JSON.parse(ok(replay!)) as {
      step: string
      approx_tokens: number
      route: { role: string }
    }[]
    expect(decided.map((r) => [r.step, r.route.role])).toEqual([
      ['001', 'big'],
      ['002', 'big'],
      ['003', 'big'],
    ])
    expect(decided[1]!.approx_tokens).toBeGreaterThan(decided[0]!.approx_tokens)
  }, 60_000)
})

describe('attempts from a responses notch', () => {
  beforeEach(() => fake.reset())
  const sent = (): Item => JSON.parse(fake.received[0]?.body.toString() ?? '{}') as Item

  it('attempt continues the notch in Responses items: its output, "not run" per call, the goal; reasoning dropped for another model', async () => {
    const r = await run('attempt', WS, '--from', 'main@001', '--goal', 'Review the call.', '--role', 'gptrev')
    expect(r.code).toBe(0)
    const child = r.stdout.trim()
    expect(child).toMatch(/^main-\d{8}T\d{6}Z-[0-9a-f]{4}$/)
    expect(fake.received.map((x) => `${x.method} ${x.url}`)).toEqual(['POST /v1/responses'])
    expect(fake.received[0]?.headers.authorization).toBe('Bearer sk-attempt')
    const body = sent()
    const notchInput = step[0]!.input as Item[]
    const input = body.input as Item[]
    expect(body).toMatchObject({
      model: 'gpt-5-mini',
      stream: true,
      store: false,
      prompt_cache_key: 'session-1',
    })
    expect(body.previous_response_id).toBeUndefined()
    expect(input.slice(0, notchInput.length)).toEqual(notchInput)
    expect(input.slice(notchInput.length).map((i) => i.type)).toEqual([
      'function_call',
      'function_call_output',
      'message',
    ])
    expect(input.at(-2)).toMatchObject({ call_id: input.at(-3)!.call_id, output: NOT_RUN })
    expect(input.at(-1)).toEqual(user('Review the call.'))
    await p.settled()
    expect(git(p.repo(WS), 'log', '--format=%s', `agents/${child}`).split('\n').slice(0, 2)).toEqual([
      `step 001: gpt-5-mini [${child}]`,
      `dispatch: gptrev [${child}]`,
    ])
    const meta = JSON.parse(git(p.repo(WS), 'show', `agents/${child}:steps/${child}/001/meta.json`)) as object
    expect(meta).toMatchObject({
      dialect: 'responses',
      status: 200,
      route: { provider: 'keyedai', role: 'gptrev' },
    })
  }, 60_000)

  it('dispatch forks a later notch, and refuses a role whose row speaks another dialect', async () => {
    const [forked, refused] = await Promise.all([
      run('dispatch', 'gptrev', WS, 'main', '--goal', 'Go on.', '--from', 'main@002'),
      run('dispatch', 'sonnet', WS, 'main', '--goal', 'Go on.', '--from', 'main@002'),
    ])
    expect(ok(forked)).toMatch(/^main-\d{8}T\d{6}Z-[0-9a-f]{4}\n$/)
    // Another model: the notch's reasoning item (its encrypted content bound to gpt-5) is dropped.
    const notchInput = (step[1]!.input as Item[]).filter((i) => i.type !== 'reasoning')
    expect(notchInput).toHaveLength((step[1]!.input as Item[]).length - 1)
    const input = sent().input as Item[]
    expect(input.slice(0, notchInput.length)).toEqual(notchInput)
    expect(input.slice(-2).map((i) => [i.type, i.role])).toEqual([
      ['message', 'assistant'],
      ['message', 'user'],
    ])
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toMatch(/speaks anthropic; the notch's conversation speaks responses/)
  }, 60_000)
})
