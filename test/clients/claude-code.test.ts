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
import type { AgentRow } from '../../cli/agents'
import { envVars } from '../../cli/env'
import { composeArgv } from '../../cli/run-with'
import type { StepRow } from '../../cli/steps'
import type { StepMeta } from '../../generated/meta'
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
import { cliInProcess, STDIO_HOST, stdioClient, tempDir } from '../proxy/tools/support'

jest.setTimeout(180_000)

const model = scriptedModel()
let fake: FakeUpstream
let p: Proxy
let dir: string
let claude: ClaudeSession
/** One user turn: the steps of `main` it began and ended with, and what Claude Code listed at its start. */
interface Turn {
  from: number
  to: number
  tools: string[]
  servers: { name: string; status: string }[]
}
const t = {} as Record<'agent' | 'drop' | 'dropped' | 'list' | 'load' | 'run' | 'unload' | 'unloaded', Turn>

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

/** One turn, waited for until its steps are committed. */
async function say(text: string): Promise<Turn> {
  const from = (await mainSteps()) + 1
  const events = await claude.turn(text)
  expect(events.at(-1)).toMatchObject({ type: 'result', subtype: 'success' })
  const init = events.find((e) => e.type === 'system' && e.subtype === 'init') as
    { tools?: string[]; mcp_servers?: Turn['servers'] } | undefined
  return { from, to: await mainSteps(), tools: init?.tools ?? [], servers: init?.mcp_servers ?? [] }
}

/** The same turn again (a while apart) until what Claude Code lists at its start satisfies `ok`. */
async function until(text: string, ok: (x: Turn) => boolean, tries = 20): Promise<Turn> {
  for (let i = 1; ; i++) {
    const x = await say(text)
    if (ok(x)) return x
    if (i === tries) throw new Error(`after ${tries} turns of ${JSON.stringify(text)}: ${JSON.stringify(x)}`)
    await new Promise((r) => setTimeout(r, 300))
  }
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
  // What `holdfast run --ws cc --agent main -- claude …` gives the CLI: the env exports and the argv
  // naming the agent's MCP endpoint; the CLI also has a stdio server of its own that can drop tools.
  const vars = envVars(p.url, 'cc', 'main', p.token)
  const own = {
    mcpServers: {
      own: {
        type: 'stdio',
        command: process.execPath,
        args: ['-r', REGISTER, STDIO_HOST],
        env: { FIXTURE_LIST_CHANGED: '1' },
      },
    },
  }
  // -p asks no one: the tools the script calls are allowed by name (no bypass, which root may not use).
  const argv = [
    'claude',
    '--mcp-config',
    JSON.stringify(own),
    '--allowedTools',
    'mcp__holdfast,mcp__own__changed',
  ]
  const home = path.join(dir, 'home')
  const cwd = path.join(dir, 'work')
  fs.mkdirSync(cwd, { recursive: true })
  claude = startClaude({
    bin,
    cwd,
    env: claudeEnv(home, vars.ANTHROPIC_BASE_URL as string, vars),
    args: composeArgv(argv, vars.ANTHROPIC_BASE_URL as string, p.token, true).slice(1),
  })
  const subagent = {
    description: 'look around',
    prompt: 'SUBTASK: just answer.',
    subagent_type: 'general-purpose',
  }
  const has = (name: string) => (x: Turn) => x.tools.includes(name)
  const lacks = (name: string) => (x: Turn) => !x.tools.includes(name)
  // -p does not wait for a slow stdio server: warm up until both MCP servers are connected.
  await until('Warm up.', (x) => x.servers.length === 2 && x.servers.every((v) => v.status === 'connected'))
  t.agent = await say(call('Agent', subagent, 'Start a helper.'))
  t.drop = await say(call('mcp__own__changed', { advertise: ['echo', 'changed'] }, 'Drop tools.'))
  // Claude Code lists again on tools/list_changed; the first turn that no longer lists them:
  t.dropped = await until('What now?', lacks('mcp__own__shout'))
  t.list = await say(call('mcp__holdfast__clients', { op: 'list' }))
  t.load = await say(call('mcp__holdfast__clients', { op: 'load', client: 'fx', tools: ['echo'] }))
  t.run = await until(
    call('mcp__holdfast__fx_echo', { text: 'hello from the model' }),
    has('mcp__holdfast__fx_echo'),
  )
  t.unload = await say(call('mcp__holdfast__clients', { op: 'unload', client: 'fx', tools: ['echo'] }))
  t.unloaded = await until('Thanks.', lacks('mcp__holdfast__fx_echo'))
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
    const { from, to } = t.agent
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
    const before = step(t.drop.to)
    expect(before.tools).toEqual(expect.arrayContaining(dropped))
    const after = step(t.dropped.from)
    expect(after.meta.hold).toMatchObject({ applied: true, reason: 'applied', held: dropped })
    expect(after.tools).toEqual(before.tools)
    expect(after.meta.usage?.cache_read_tokens).toBeGreaterThan(0)
  })

  it('lets the agent list, load, run and unload a client’s tool through the MCP endpoint, with no double declaration', () => {
    const { list, load, run, unload } = t
    // The list's result reached the model in the next request's tool_result.
    expect(request(list.to)).toMatch(/"tool_result".*fx: stdio/)
    // After the load, the harness declares the tool itself: nothing injected, meta says so.
    const declared = step(run.from)
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
    expect(request(run.to)).toMatch(/"tool_result".*hello from the model/)
    expect(load.to).toBeGreaterThan(load.from)
    // After the unload the harness drops it; the next step re-sends the previous tools array.
    const held = step(t.unloaded.from)
    expect(held.meta.hold).toMatchObject({ applied: true, held: ['mcp__holdfast__fx_echo'] })
    expect(held.tools).toEqual(step(unload.to).tools)
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
    expect(steps).toHaveLength(t.unloaded.to)
    expect(steps.every((s) => s.outcome === 'ok' && s.state === 'committed')).toBe(true)
    const after = t.unloaded.from
    expect(steps[after - 1]).toMatchObject({ hold_reason: 'applied', held: ['mcp__holdfast__fx_echo'] })

    const text = await cli('why', 'cc', 'main', nnn(after))
    expect(text).toContain(`hold applied: re-sent step ${nnn(after - 1)}'s tools array`)
    expect(text).toContain('held: mcp__holdfast__fx_echo')
    expect(text).toMatch(/provider cache: read [1-9]/)
  })
})
