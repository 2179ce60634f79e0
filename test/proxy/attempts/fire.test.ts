/**
 * Attempts end to end (proxy/attempts): a recorded conversation, then attempts fired from one of its
 * steps through the running proxy, against the fake upstream. Refusals leave no ref and no file
 * behind; every dispatch is an ops-log row; the cohort is derived from the refs.
 */
import fs from 'node:fs'
import path from 'node:path'
import { cohortOf } from '../../../proxy/attempts/cohort'
import { dispatchOne, fireCohort } from '../../../proxy/attempts/fire'
import { readOps } from '../../../proxy/store/ops-log'
import { setRole } from '../../../proxy/store/config/edit'
import { openRepo } from '../../../proxy/store/git'
import { Workspace } from '../../../proxy/store/workspace'
import { git, type Proxy } from '../../support/harness'
import { type AttemptsProxy, startAttemptsProxy, WS } from './proxy.support'

let a: AttemptsProxy
let p: Proxy

beforeAll(async () => {
  a = await startAttemptsProxy()
  p = a.p
})
afterAll(() => a.close())
beforeEach(() => p.fake.reset())

const ask = (agent: string, content: string, extra: object = {}): Promise<number> =>
  a.ask(agent, content, extra)

const refs = (): string[] => git(p.repo(WS), 'for-each-ref', '--format=%(refname)').trim().split('\n').sort()
const fire = (roles: string[], from = 'main@002', extra: object = {}) =>
  fireCohort(
    p.home,
    p.server.ctx.config,
    { ws: WS, from, goal: 'Review the answer above.\n  Be brief.', roles, skills: [], ...extra },
    'cli',
  )

describe('an attempt from a recorded step', () => {
  it('names the notch’s answer as its diagnostics id, never the id the notch’s own request carried', async () => {
    await ask('diag', 'one', { diagnostics: { previous_message_id: null } })
    await ask('diag', 'two', { diagnostics: { previous_message_id: 'msg_stale_before_the_notch' } })
    await p.settled()
    expect(p.fake.received).toHaveLength(2)
    const notchAnswer = JSON.parse(git(p.repo(WS), 'show', 'agents/diag:steps/diag/002/meta.json')) as {
      answer_id: string
    }
    expect(notchAnswer.answer_id).toMatch(/^msg_/)
    p.fake.reset()
    const [r] = await fire(['reviewer'], 'diag@002')
    expect(r).toMatchObject({ exit: 0 })
    await p.settled()
    const sent = JSON.parse(p.fake.received[0]?.body.toString() ?? '{}') as { diagnostics?: unknown }
    expect(sent.diagnostics).toEqual({ previous_message_id: notchAnswer.answer_id })
  })

  it('creates agents/<child> at the notch with goal.md verbatim, and continues the conversation from there', async () => {
    const [r] = await fire(['reviewer'])
    expect(r).toMatchObject({ exit: 0, child: expect.stringMatching(/^main-\d{8}T\d{6}Z-[0-9a-f]{4}$/) })
    await p.settled()
    const child = r?.child as string
    const notch = git(p.repo(WS), 'log', '--format=%H %s', 'agents/main')
      .split('\n')
      .find((l) => l.includes('step 002'))
      ?.split(' ')[0]
    const log = git(p.repo(WS), 'log', '--format=%s', `agents/${child}`).trim().split('\n')
    expect(log.slice(0, 3)).toEqual([
      `step 001: claude-haiku-4-5 [${child}]`,
      `dispatch: reviewer [${child}]`,
      'step 002: claude-sonnet-4-5 [main]',
    ])
    expect(git(p.repo(WS), 'merge-base', '--is-ancestor', notch as string, `agents/${child}`)).toBe('')
    expect(git(p.repo(WS), 'show', `agents/${child}:goal.md`)).toBe('Review the answer above.\n  Be brief.')
    const tree = git(p.repo(WS), 'ls-tree', '-r', '--name-only', `agents/${child}`)
    expect(tree).toContain('steps/main/002/request.json')
    expect(tree).not.toContain('steps/main/003/')
    const sent = JSON.parse(p.fake.received[0]?.body.toString() ?? '{}')
    expect(sent.model).toBe('claude-haiku-4-5')
    expect(sent.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'user'])
    expect(sent.messages[0].content).toBe('question 2')
    expect(sent.messages[2].content).toEqual([
      { type: 'text', text: 'Review the answer above.\n  Be brief.' },
    ])
    expect(p.fake.received[0]?.headers['x-api-key']).toBe('sk-attempt')
    const row = readOps(p.home).at(-1)
    expect(row).toMatchObject({ exit: 0, origin: 'cli', stdout: `${child}\n` })
    expect(row?.argv.slice(0, 7)).toEqual([
      'dispatch',
      'reviewer',
      WS,
      'main',
      '--goal',
      'Review the answer above.\n  Be brief.',
      '--from',
    ])
    expect(row?.argv[7]).toBe(notch)
  })

  it("accepts a role declared after the notch was recorded (the fork point's followed config)", async () => {
    // All roles were declared after steps 1–3 were recorded: the reviewer attempt above proves it too.
    const [r] = await fire(['critic'], 'main@001')
    expect(r?.exit).toBe(0)
    expect(JSON.parse(p.fake.received[0]?.body.toString() ?? '{}').max_tokens).toBe(100)
  })

  it('starts clean from config/<name>: just the goal, on a branch at the lineage tip', async () => {
    const [r] = await fire(['critic'], 'config/default', { parent: 'main' })
    expect(r?.exit).toBe(0)
    const sent = JSON.parse(p.fake.received[0]?.body.toString() ?? '{}')
    expect(sent).toMatchObject({
      model: 'claude-haiku-4-5',
      max_tokens: 321,
      messages: [{ role: 'user', content: 'Review the answer above.\n  Be brief.' }],
    })
    expect(readOps(p.home).at(-1)?.argv[7]).toBe('config/default')
    await p.settled()
    expect(git(p.repo(WS), 'rev-parse', `agents/${r?.child}~2`).trim()).toBe(
      git(p.repo(WS), 'rev-parse', 'config/default').trim(),
    )
  })

  it('pins files in order into the child and puts skill text before the goal', async () => {
    const skill = path.join(p.home, 'skills', 'strict', 'SKILL.md')
    fs.mkdirSync(path.dirname(skill), { recursive: true })
    fs.writeFileSync(skill, 'Check every claim.\n')
    const [r] = await fire(['reviewer'], 'main@002', { skills: ['strict'] })
    expect(r?.exit).toBe(0)
    await p.settled()
    expect(git(p.repo(WS), 'show', `agents/${r?.child}:skills/strict/SKILL.md`)).toBe('Check every claim.\n')
    expect(r?.argv.slice(8)).toEqual(['--pin', `skills/strict/SKILL.md=${p.home}/skills/strict/SKILL.md`])
    const text = JSON.parse(p.fake.received[0]?.body.toString() ?? '{}').messages[2].content[0].text
    expect(text).toBe(
      '<skill path="skills/strict/SKILL.md">\nCheck every claim.\n</skill>\n\nReview the answer above.\n  Be brief.',
    )
  })
})

describe('refusals leave nothing behind', () => {
  const cases: [string, () => Promise<{ exit: number; message?: string }>, RegExp][] = [
    ['an unknown ref, named', async () => await dispatch({ from: 'no-such-ref' }), /--from no-such-ref/],
    ['a step the agent does not have', async () => dispatch({ from: 'main@042' }), /no committed step 042/],
    [
      'an undeclared role',
      async () => dispatch({ role: 'poet' }),
      /role "poet" is not declared.*declared roles: critic, gpt, nokey, reviewer, writer/,
    ],
    [
      'a role whose row names no api_key_env',
      async () => dispatch({ role: 'nokey' }),
      /names no api_key_env/,
    ],
    ['a role of another dialect than the notch', async () => dispatch({ role: 'gpt' }), /speaks openai/],
    [
      'a parent that does not exist',
      async () => dispatch({ parent: 'ghost' }),
      /parent agent "ghost" does not exist/,
    ],
    [
      'a reserved pin destination',
      async () => dispatch({ pins: [{ dest: 'goal.md', src: __filename }] }),
      /reserved/,
    ],
    [
      'a malformed pin destination',
      async () => dispatch({ pins: [{ dest: '../x', src: __filename }] }),
      /segment/,
    ],
    [
      'an unreadable pin source',
      async () => dispatch({ pins: [{ dest: 'a.md', src: '/nope/none' }] }),
      /not readable/,
    ],
    ['an empty goal', async () => dispatch({ goal: '   ' }), /goal is empty/],
  ]
  async function dispatch(over: object) {
    return dispatchOne(
      p.home,
      p.server.ctx.config,
      { role: 'reviewer', ws: WS, parent: 'main', goal: 'g', from: 'main@002', pins: [], ...over },
      'cli',
    )
  }

  it.each(cases)('refuses %s, creating no ref', async (_what, run, why) => {
    const before = refs()
    const r = await run()
    expect(r.exit).toBe(1)
    expect(r.message).toMatch(why)
    expect(refs()).toEqual(before)
    expect(p.fake.received).toHaveLength(0)
    expect(readOps(p.home).at(-1)).toMatchObject({ exit: 1, stderr: expect.stringMatching(why) })
  })

  it('refuses a role only another lineage declares', async () => {
    const repo = openRepo(p.repo(WS))
    const root = git(p.repo(WS), 'rev-list', '--max-parents=0', 'config/default').trim()
    git(p.repo(WS), 'branch', 'config/other', root)
    await setRole(repo, 'other', 'outsider', { provider: 'keyed', model: 'm' }, p.server.ctx.config.providers)
    const before = refs()
    // main forked from the root before any role; config/default and config/other both contain it and
    // diverged: the fork point's followed config is held at the root, which declares no roles at all.
    const r = await dispatch({ role: 'outsider' })
    expect(r).toMatchObject({ exit: 1, message: expect.stringMatching(/role "outsider" is not declared/) })
    expect(refs()).toEqual(before)
    git(p.repo(WS), 'branch', '-D', 'config/other')
  })

  it('refuses a notch whose own step failed', async () => {
    p.fake.enqueue({ status: 500 })
    await ask('broken', 'q')
    await p.settled()
    const r = await dispatchOne(
      p.home,
      p.server.ctx.config,
      { role: 'reviewer', ws: WS, parent: 'broken', goal: 'g', from: 'broken@001', pins: [] },
      'cli',
    )
    expect(r).toMatchObject({ exit: 1, message: expect.stringMatching(/did not succeed.*500/) })
  })
})

describe('continuing special notches', () => {
  it('continues a notch answered as a stream (response.sse)', async () => {
    await ask('streamer', 'tell me', { stream: true })
    await p.settled()
    p.fake.reset()
    const [r] = await fire(['reviewer'], 'streamer@001')
    expect(r?.exit).toBe(0)
    const sent = JSON.parse(p.fake.received[0]?.body.toString() ?? '{}')
    expect(sent.messages[1]).toEqual({
      role: 'assistant',
      content: [{ type: 'text', text: 'Hello from the fake upstream.' }],
    })
  })

  it('answers each tool call of a notch that ended in tool calls with an error result before the goal', async () => {
    const reply = {
      id: 'msg_t',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [{ type: 'tool_use', id: 'toolu_1', name: 'Read', input: { path: 'a.ts' } }],
      stop_reason: 'tool_use',
      usage: { input_tokens: 5, output_tokens: 5 },
    }
    p.fake.enqueue({ body: JSON.stringify(reply) })
    await ask('tooler', 'read a.ts', {
      tools: [{ name: 'Read', description: 'read', input_schema: { type: 'object' } }],
    })
    await p.settled()
    p.fake.reset()
    const [r] = await fire(['reviewer'], 'tooler@001')
    expect(r?.exit).toBe(0)
    const sent = JSON.parse(p.fake.received[0]?.body.toString() ?? '{}')
    expect(sent.tools).toEqual([{ name: 'Read', description: 'read', input_schema: { type: 'object' } }])
    expect(sent.messages[2].content[0]).toEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_1',
      is_error: true,
      content: 'not run: this attempt forked here',
    })
  })
})

describe('a cohort', () => {
  it('fires three roles with one refused, and is derived from the refs', async () => {
    const results = await fire(['reviewer', 'writer', 'nokey'], 'main@003')
    expect(results.map((r) => [r.role, r.exit]).sort()).toEqual([
      ['nokey', 1],
      ['reviewer', 0],
      ['writer', 0],
    ])
    await p.settled()
    const { members } = await cohortOf(new Workspace(p.home, WS), 'main@003')
    expect(members.map((m) => [m.role, m.meta?.route.model, m.answer]).sort()).toEqual([
      ['reviewer', 'claude-haiku-4-5', 'Hello from the fake upstream.'],
      ['writer', 'claude-opus-4-5', 'Hello from the fake upstream.'],
    ])
  })

  it("sends same-model attempts after the first one's first byte, and other models at once", async () => {
    // Whichever of the first haiku and the opus attempt arrives first, both wait 600 ms for headers.
    p.fake.enqueue({ delayMs: 600, times: 2 })
    const results = await fire(['reviewer', 'critic', 'writer'], 'main@001')
    expect(results.every((r) => r.exit === 0)).toBe(true)
    const at = (model: string) =>
      p.fake.received.filter((r) => JSON.parse(r.body.toString()).model === model).map((r) => r.at)
    const [first, second] = at('claude-haiku-4-5') as [number, number]
    const [opus] = at('claude-opus-4-5') as [number]
    // The second haiku attempt waited for the first one's first byte (600 ms); the opus one did not wait.
    expect(second - first).toBeGreaterThanOrEqual(580)
    expect(opus).toBeLessThan(second)
  })
})

describe('other dispatchers', () => {
  it('answers POST /_holdfast/dispatch and logs it with origin http', async () => {
    const res = await fetch(`${p.url}/_holdfast/dispatch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        argv: ['dispatch', 'reviewer', WS, 'main', '--goal', 'g', '--from', 'main@001'],
      }),
    })
    const body = (await res.json()) as { exit: number; child: string }
    expect(body.exit).toBe(0)
    expect(readOps(p.home).at(-1)).toMatchObject({ origin: 'http', stdout: `${body.child}\n` })
  })

  it('runs the configured dispatcher command with the same argv instead, and logs its row', async () => {
    const command: [string, ...string[]] = [
      process.execPath,
      '-e',
      'console.log(JSON.stringify(process.argv.slice(1)))',
    ]
    const config = { ...p.server.ctx.config, dispatcher: { command } }
    const r = await dispatchOne(
      p.home,
      config,
      { role: 'reviewer', ws: WS, parent: 'main', goal: 'g', from: 'main@001', pins: [] },
      'cli',
    )
    expect(JSON.parse(r.stdout)).toEqual([
      'dispatch',
      'reviewer',
      WS,
      'main',
      '--goal',
      'g',
      '--from',
      'main@001',
    ])
    expect(readOps(p.home).at(-1)).toMatchObject({ exit: 0, origin: 'cli' })
  })
})
