/**
 * The real Claude Code CLI (the version package.json pins) through holdfast, against the fake
 * upstream driven by a scripted model (test/support/claude-code.ts): one `-p` session in
 * stream-json, connected like `holdfast run -- claude` connects it (the agent's MCP endpoint) plus
 * a stdio MCP server of its own. It proves, on what the CLI really sends: a subagent lands on its
 * own agent and the main chain keeps its cache; a tool its own MCP server drops mid-session is
 * held; the agent lists, loads, runs and unloads a tool of a holdfast client itself, with no
 * double declaration and the unload held; `agents`, `steps` and `why` read sensibly. Loopback
 * only; a missing binary fails the suite (it never skips).
 */
import fs from 'node:fs'
import path from 'node:path'
import type { AgentRow } from '../../src/cli/agents'
import type { StepRow } from '../../src/cli/steps'
import type { StepMeta } from '../../src/generated/meta'
import {
  claudeBinary,
  claudeEnv,
  type ClaudeSession,
  scriptedModel,
  startClaude,
} from '../support/claude-code'
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream'
import { git, REGISTER, startProxy, type Proxy } from '../support/harness'
import { agentsOf, meta } from '../plugins/support'
import { cliInProcess, STDIO_HOST, stdioClient, tempDir } from '../tools/support'

jest.setTimeout(180_000)

const model = scriptedModel()
let fake: FakeUpstream
let p: Proxy
let dir: string
let claude: ClaudeSession
/** Steps of `main` each turn began and ended with (after the turn's steps settled). */
const turns: { from: number; to: number; text: string }[] = []

const call = (tool: string, input: object, say = 'Go.'): string =>
  `${say} run-tool ${tool} ${JSON.stringify(input)}`

/** Committed steps of `main` (after every step in flight has been committed). */
async function mainSteps(): Promise<number> {
  await p.settled()
  if (!fs.existsSync(p.repo('cc')) || !agentsOf(p.repo('cc')).includes('main')) return 0
  return git(p.repo('cc'), 'ls-tree', '-d', '--name-only', 'agents/main:steps/main')
    .split('\n')
    .filter(Boolean).length
}

const nnn = (n: number): string => String(n).padStart(3, '0')

/** request.json of a step of `main`, as sent. */
const request = (n: number): string =>
  git(p.repo('cc'), 'show', `agents/main:steps/main/${nnn(n)}/request.json`)

/** meta.json and the tool names of a step of `main`. */
function step(n: number): { meta: StepMeta; tools: string[] } {
  const body = JSON.parse(request(n)) as { tools: { name: string }[] }
  return { meta: meta(p.repo('cc'), 'main', nnn(n)), tools: body.tools.map((t) => t.name) }
}

async function cli(...args: string[]): Promise<string> {
  const r = await cliInProcess([...args, '--home', p.home])
  expect(r.stderr).toBe('')
  expect(r.code).toBe(0)
  return r.stdout
}

beforeAll(async () => {
  const bin = claudeBinary() // throws, naming the package, when npm did not install it
  dir = tempDir()
  fake = await startFakeUpstream({ answer: model.answer })
  const calls = path.join(dir, 'fx-calls.jsonl')
  p = await startProxy({
    fake,
    config: { clients: { fx: { ...stdioClient({ FIXTURE_CALL_LOG: calls }), workspaces: ['cc'] } } },
  })
  const base = `${p.url}/w/cc/a/main`
  const home = path.join(dir, 'home')
  const cwd = path.join(dir, 'work')
  fs.mkdirSync(cwd, { recursive: true })
  // As `holdfast run -- claude` connects it, plus a stdio server of its own that can drop tools.
  const mcp = {
    mcpServers: {
      holdfast: { type: 'http', url: `${base}/mcp` },
      own: {
        type: 'stdio',
        command: process.execPath,
        args: ['-r', REGISTER, STDIO_HOST],
        env: { FIXTURE_LIST_CHANGED: '1' },
      },
    },
  }
  claude = startClaude({
    bin,
    cwd,
    env: claudeEnv(home, base, { CLAUDE_CODE_GATEWAY_HINT_HEADERS: '1' }),
    // -p asks no one: the tools the script calls are allowed by name (no bypass needed, even as root).
    args: [
      '--mcp-config',
      JSON.stringify(mcp),
      '--strict-mcp-config',
      '--allowedTools',
      'mcp__holdfast,mcp__own__changed',
    ],
  })
  const subagent = {
    description: 'look around',
    prompt: 'SUBTASK: just answer.',
    subagent_type: 'general-purpose',
  }
  for (const text of [
    call('Agent', subagent, 'Start a helper.'), // 1: a subagent
    call('mcp__own__changed', { advertise: ['echo', 'changed'] }, 'Drop tools.'), // 2: its own server drops 9 tools
    'What now?', // 3: the first step after the drop
    call('mcp__holdfast__clients', { op: 'list' }), // 4
    call('mcp__holdfast__clients', { op: 'load', client: 'fx', tools: ['echo'] }), // 5
    call('mcp__holdfast__fx_echo', { text: 'hello from the model' }), // 6
    call('mcp__holdfast__clients', { op: 'unload', client: 'fx', tools: ['echo'] }), // 7
    'Thanks.', // 8: the first step after the unload
  ]) {
    const from = (await mainSteps()) + 1
    const events = await claude.turn(text)
    expect(events.at(-1)).toMatchObject({ type: 'result', subtype: 'success' })
    turns.push({ from, to: await mainSteps(), text })
  }
  expect(await claude.close()).toBe(0)
  await p.settled()
})

afterAll(async () => {
  await claude?.close()
  await p?.close()
  await fake?.close()
  if (dir) fs.rmSync(dir, { recursive: true, force: true })
})

describe('Claude Code through holdfast', () => {
  it('puts the subagent on main.sub-<agent id>, and the main agent’s next step reads its cache', () => {
    const subs = agentsOf(p.repo('cc')).filter((a) => a.startsWith('main.sub-'))
    expect(subs).toHaveLength(1)
    const sub = subs[0] as string
    expect(meta(p.repo('cc'), sub, '001').identified?.why).toBe('claude-code: an agent id')
    // Turn 1: the Agent call, then the step carrying its result, on main only.
    const { from, to } = turns[0]!
    expect(to - from).toBe(1)
    const next = step(to).meta
    expect(next.hold.reason).not.toBe('system-changed')
    expect(next.hold.reason).toBe('no-subtraction')
    expect(next.usage?.cache_read_tokens).toBeGreaterThan(0)
  })

  it('holds the tools its own MCP server dropped mid-session (tools/list_changed), and the cache is read', () => {
    const dropped = ['die', 'env', 'fail', 'pid', 'plain', 'shape', 'shout', 'sleep', 'stderr'].map(
      (t) => `mcp__own__${t}`,
    )
    const before = step(turns[1]!.to)
    expect(before.tools).toEqual(expect.arrayContaining(dropped))
    const after = step(turns[2]!.from)
    expect(after.meta.hold).toMatchObject({ applied: true, reason: 'applied', held: dropped })
    expect(after.tools).toEqual(before.tools)
    expect(after.meta.usage?.cache_read_tokens).toBeGreaterThan(0)
  })

  it('lets the agent list, load, run and unload a client’s tool through the MCP endpoint, with no double declaration', () => {
    const [list, load, run, unload] = turns.slice(3, 7) as (typeof turns)[number][]
    // The list's result reached the model in the next request's tool_result.
    expect(request(list!.to)).toMatch(/"tool_result".*fx: stdio/)
    // After the load, the harness declares the tool itself: nothing injected, meta says so.
    const declared = step(run!.from)
    expect(declared.tools).toContain('mcp__holdfast__fx_echo')
    expect(declared.tools).not.toContain('fx_echo')
    expect(declared.meta.injected_tools).toEqual([])
    expect(declared.meta.harness_tools).toEqual(['mcp__holdfast__fx_echo'])
    // The call went to the stdio host, and its result reached the model.
    const logged = fs.readFileSync(path.join(dir, 'fx-calls.jsonl'), 'utf8').trim().split('\n')
    expect(logged.map((l) => JSON.parse(l) as unknown)).toContainEqual({
      name: 'echo',
      arguments: { text: 'hello from the model' },
    })
    expect(request(run!.to)).toMatch(/"tool_result".*hello from the model/)
    expect(load!.to).toBeGreaterThan(load!.from)
    // After the unload the harness drops it; the next step re-sends the previous tools array.
    const held = step(turns[7]!.from)
    expect(held.meta.hold).toMatchObject({ applied: true, held: ['mcp__holdfast__fx_echo'] })
    expect(held.tools).toEqual(step(unload!.to).tools)
    expect(held.meta.usage?.cache_read_tokens).toBeGreaterThan(0)
  })

  it('reads sensibly in holdfast agents, steps and why', async () => {
    const agents = JSON.parse(await cli('agents', 'cc', '--json')) as AgentRow[]
    const main = agents.find((a) => a.agent === 'main')
    expect(main).toMatchObject({ kind: 'main', parent: null })
    expect(main!.held_steps).toBeGreaterThanOrEqual(2)
    expect(main!.writes_avoided_tokens).toBeGreaterThan(0)
    expect(agents.find((a) => a.kind === 'subagent')).toMatchObject({ parent: 'main', steps: 1 })

    const steps = JSON.parse(await cli('steps', 'cc', 'main', '--json')) as StepRow[]
    expect(steps).toHaveLength(turns.at(-1)!.to)
    expect(steps.every((s) => s.outcome === 'ok' && s.state === 'committed')).toBe(true)
    const after = turns[7]!.from
    expect(steps[after - 1]).toMatchObject({ hold_reason: 'applied', held: ['mcp__holdfast__fx_echo'] })

    const text = await cli('why', 'cc', 'main', nnn(after))
    expect(text).toContain(`hold applied: re-sent step ${nnn(after - 1)}'s tools array`)
    expect(text).toContain('held: mcp__holdfast__fx_echo')
    expect(text).toMatch(/provider cache: read [1-9]/)
  })
})
