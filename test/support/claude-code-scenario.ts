/**
 * The Claude Code scenarios of issue 29, for one pinned version, through `holdfast run` against
 * the scripted model: a subagent; an MCP server dropping tools mid-session (2.1.197 removes them,
 * 2.1.332 keeps its fetched deferred definitions and moves them); a tool loaded, run and unloaded
 * through the agent's own `clients` tool; `/compact` and a turn after it. `describeScenarios`
 * states the rules each must keep, as tests. With HOLDFAST_SHOW=<file>, the `steps` and `why`
 * output of every step is appended there (the issue's closing note shows them); HOLDFAST_SHOW=1
 * prints only the figures and the table of causes.
 */
import { CLIENT_CAUSES, PROXY_CAUSES } from '../../proxy/core/cache-cause'
import fs from 'node:fs'
import type { AgentRow } from '../../cli/agents'
import type { StepRow } from '../../cli/steps'
import { pinnedVersion, scriptedModel, type ClaudePackage } from './claude-code'
import { startRunSession, type RunSession, type Turn, WS } from './claude-code-run'
import { startFakeUpstream, type FakeUpstream } from './fake-upstream'

/** A step re-billed its prefix (a cache write of more than a turn's new text). */
export const PREFIX_WRITE = 1000

const call = (tool: string, input: object, say = 'Go.'): string =>
  `${say} run-tool ${tool} ${JSON.stringify(input)}`
const nnn = (n: number): string => String(n).padStart(3, '0')
const range = (a: number, b: number): number[] =>
  Array.from({ length: Math.max(0, b - a + 1) }, (_, i) => a + i)

type Name =
  'agent' | 'drop' | 'dropped' | 'load' | 'declared' | 'call' | 'unload' | 'unloaded' | 'compact' | 'after'

export interface Scenario {
  s: RunSession
  deferred: boolean
  t: Record<Name, Turn>
  rows: StepRow[]
  exit: number | null
  /** The session id of the scenario's session. */
  first: string
  /** Two runs after it: a second session, then the first one resumed. */
  later: { code: number | null; output: string }[]
}

/** Run every turn of the scenario, then end the session (the run and its serve with it). */
async function play(pkg: ClaudePackage, fake: FakeUpstream): Promise<Scenario> {
  // 2.1.332 defers MCP tools: the model fetches them with ToolSearch before it can call them.
  const deferred = pkg !== '@anthropic-ai/claude-code'
  const s = startRunSession(pkg, fake, ['mcp__holdfast', 'mcp__box__changed', 'ToolSearch'])
  const t = {} as Record<Name, Turn>
  const has = (name: string) => (x: Turn) => x.tools.includes(name)
  const lacks = (name: string) => (x: Turn) => !x.tools.includes(name)
  // -p does not wait for a slow stdio server: warm up until both MCP servers are connected.
  await s.until('Warm up.', (x) => x.servers.length === 2 && x.servers.every((v) => v.status === 'connected'))
  // 2.1.332 runs an agent in the background unless told not to, and then answers its notification
  // on its own, a turn no user turn asked for: this one runs in the foreground.
  const helper = {
    description: 'look around',
    prompt: 'SUBTASK: just answer.',
    subagent_type: 'general-purpose',
    ...(deferred ? { run_in_background: false } : {}),
  }
  t.agent = await s.say(call('Agent', helper, 'Start a helper.'))
  if (deferred) await s.say(call('ToolSearch', { query: 'select:mcp__box__shout,mcp__box__changed' }))
  t.drop = await s.say(call('mcp__box__changed', { advertise: ['echo', 'changed'] }, 'Drop tools.'))
  // Claude Code lists again on tools/list_changed; from the first turn that no longer lists them:
  t.dropped = await s.until('What now?', lacks('mcp__box__shout'))
  if (deferred) await s.say(call('ToolSearch', { query: 'select:mcp__holdfast__clients' }))
  t.load = await s.say(call('mcp__holdfast__clients', { op: 'load', client: 'box', tools: ['echo'] }))
  t.declared = deferred
    ? await s.say(call('ToolSearch', { query: 'select:mcp__holdfast__box_echo' }))
    : await s.until('Next.', has('mcp__holdfast__box_echo'))
  t.call = await s.say(call('mcp__holdfast__box_echo', { text: 'hello from the model' }))
  t.unload = await s.say(call('mcp__holdfast__clients', { op: 'unload', client: 'box', tools: ['echo'] }))
  t.unloaded = await s.until('Thanks.', lacks('mcp__holdfast__box_echo'))
  t.compact = await s.say('/compact')
  t.after = await s.say('Thanks for the summary.')
  const exit = await s.close()
  const rows = await s.rows()
  // Later, each with a serve of its own (the first one stopped): a new session, then the first resumed.
  const first = (await s.meta(1)).request_headers['x-claude-code-session-id'] as string
  const later = [
    await s.once(['-p', 'Hello from a second session.']),
    await s.once(['-p', '--resume', first, 'Back to the first session.']),
  ]
  return { s, deferred, t, rows, exit, first, later }
}

async function show(sc: Scenario, version: string): Promise<void> {
  // HOLDFAST_SHOW=1 prints the figures only; a path also gets every step's steps and why.
  const file = process.env.HOLDFAST_SHOW
  if (!file || file === '1') return
  const out = [
    `==== Claude Code ${version} ====`,
    await sc.s.cli('steps', WS, 'main'),
    await sc.s.cli('agents', WS),
  ]
  for (const [name, turn] of Object.entries(sc.t)) {
    out.push(`---- turn ${name}: ${JSON.stringify(turn.text)} (steps ${nnn(turn.from)}..${nnn(turn.to)})`)
    for (const n of range(turn.from, turn.to)) out.push(await sc.s.cli('why', WS, 'main', nnn(n)))
  }
  fs.appendFileSync(file, out.join('\n') + '\n')
}

/** The tests of one version. */
export function describeScenarios(pkg: ClaudePackage): void {
  const version = pinnedVersion(pkg)
  const model = scriptedModel()
  let fake: FakeUpstream
  let sc: Scenario

  beforeAll(async () => {
    fake = await startFakeUpstream({ answer: model.answer })
    sc = await play(pkg, fake)
    await show(sc, version)
  }, 600_000)

  afterAll(async () => {
    await fake?.close()
    if (sc) fs.rmSync(sc.s.dir, { recursive: true, force: true })
  })

  const stepsIn = (from: number, to: number) => Promise.all(range(from, to).map((n) => sc.s.meta(n)))
  const toolNames = async (n: number): Promise<string[]> =>
    ((await sc.s.request(n)).tools as { name: string }[]).map((x) => x.name)

  describe(`Claude Code ${version} through holdfast run`, () => {
    it('ends the session with the run, and the serve the run started stops with every step committed', () => {
      expect(sc.exit).toBe(0)
      expect(fs.existsSync(`${sc.s.home}/serve.json`)).toBe(false)
      expect(sc.rows.every((r) => r.state === 'committed' && r.outcome === 'ok')).toBe(true)
    })

    it("puts the subagent on main.sub-<agent id>, and main's next step reads its cache", async () => {
      const agents = JSON.parse(await sc.s.cli('agents', WS, '--json')) as AgentRow[]
      expect(agents.find((a) => a.agent === 'main')).toMatchObject({ kind: 'main', parent: null })
      expect(agents.filter((a) => a.kind === 'subagent')).toEqual([
        expect.objectContaining({ parent: 'main', agent: expect.stringMatching(/^main\.sub-/) }),
      ])
      const next = await sc.s.meta(sc.t.agent.to)
      expect(next.hold.reason).toBe('no-subtraction')
      expect(next.usage?.cache_read_tokens).toBeGreaterThan(0)
    })

    it('holds the tools its own MCP server dropped, whether Claude Code removes them or moves them, and the cache is read', async () => {
      const window = range(sc.t.drop.to + 1, sc.t.dropped.to)
      const metas = await stepsIn(window[0] as number, window.at(-1) as number)
      // A failure lists the window's verdicts (none: the turns added no step to main).
      expect(metas.map((m) => m.hold.reason)).toContain('applied')
      const i = metas.findIndex((m) => m.hold.applied)
      const held = metas[i]!
      if (sc.deferred) {
        // The same definitions in another order: nothing dropped, a reorder held.
        expect(held.hold).toEqual({ applied: true, reason: 'applied', held: [], reordered: true })
      } else {
        const gone = ['die', 'env', 'fail', 'pid', 'plain', 'shape', 'shout', 'sleep', 'stderr'].map(
          (x) => `mcp__box__${x}`,
        )
        expect(held.hold).toEqual({ applied: true, reason: 'applied', held: gone })
      }
      const n = window[i] as number
      expect(await toolNames(n)).toEqual(await toolNames(n - 1))
      expect(held.usage?.cache_read_tokens).toBeGreaterThan(0)
      expect(held.usage?.cache_write_tokens).toBeLessThan(PREFIX_WRITE)
    })

    it('loads a tool through the clients tool with at most one cache write, never declaring a name Claude Code cannot run', async () => {
      const { load, declared } = sc.t
      expect(load.results).toEqual([
        'Loaded. Callable from your next turn: `box_echo` as `mcp__holdfast__box_echo`. If it is listed as deferred, fetch it with your tool search (ToolSearch) first.',
      ])
      const window = range(load.from, sc.t.call.to)
      const metas = await stepsIn(load.from, sc.t.call.to)
      expect(metas.every((m) => m.injected_tools.length === 0)).toBe(true)
      // At most one step re-bills the prefix: the one where Claude Code first declares the tool itself.
      const names = await Promise.all(window.map(toolNames))
      for (const n of names) expect(n).not.toContain('box_echo')
      const at = window.find((_, k) => names[k]!.includes('mcp__holdfast__box_echo'))
      expect(at).toBeGreaterThanOrEqual(declared.from)
      const writes = window.filter((_, k) => (metas[k]!.usage?.cache_write_tokens ?? 0) > PREFIX_WRITE)
      expect(writes.length).toBeLessThanOrEqual(1)
      for (const n of writes) expect(n).toBe(at)
      expect(metas[(at as number) - load.from]!.harness_tools).toEqual(['mcp__holdfast__box_echo'])
      // The call reached the tool host and its answer the model.
      expect(sc.t.call.results).toEqual(['hello from the model'])
      expect(fs.readFileSync(sc.s.calls, 'utf8')).toContain('"text":"hello from the model"')
    })

    it('holds the unload: no step re-bills the prefix, and the tool the harness dropped or moved is held', async () => {
      const { unload, unloaded } = sc.t
      expect(unload.results).toEqual(['Unloaded. No longer callable: `mcp__holdfast__box_echo`.'])
      const metas = await stepsIn(unload.from, unloaded.to)
      expect(metas.filter((m) => (m.usage?.cache_write_tokens ?? 0) > PREFIX_WRITE)).toEqual([])
      const held = metas.find((m) => m.hold.applied)
      expect(held?.hold).toEqual(
        sc.deferred
          ? { applied: true, reason: 'applied', held: [], reordered: true }
          : { applied: true, reason: 'applied', held: ['mcp__holdfast__box_echo'] },
      )
    })

    it('marks the compaction and the step after it, and why names the compaction, not another conversation', async () => {
      const metas = await stepsIn(sc.t.compact.from, sc.t.after.to)
      const k = metas.findIndex((m) => m.compaction?.kind === 'request')
      expect(k).toBeGreaterThanOrEqual(0)
      const c = sc.t.compact.from + k
      expect(metas[k]!.compaction?.via).toBe(
        sc.deferred
          ? 'header x-claude-code-request-class: compaction'
          : 'its last user turn asks for a summary of the conversation',
      )
      const after = await sc.s.meta(c + 1)
      expect(after.compaction?.kind).toBe('after')
      expect(sc.rows[c]?.compaction).toBe('after')
      expect(sc.rows[c - 1]?.compaction).toBe('request')
      const why = await sc.s.cli('why', WS, 'main', nnn(c + 1))
      expect(why).toContain(`the conversation was compacted at step ${nnn(c)}`)
      expect(why).not.toContain('another conversation')
    })

    it('lays sessions out from the records: a later session, under a serve of its own, goes to main.s-<id>, and resuming the first goes back to main', async () => {
      expect(sc.later.map((r) => r.code)).toEqual([0, 0])
      const rows = await sc.s.rows()
      expect(rows).toHaveLength(sc.rows.length + 1)
      expect((await sc.s.meta(rows.length)).request_headers['x-claude-code-session-id']).toBe(sc.first)
      const agents = (JSON.parse(await sc.s.cli('agents', WS, '--json')) as AgentRow[]).map((a) => a.agent)
      const second = agents.filter((a) => /^main\.s-[A-Za-z0-9_-]{8}$/.test(a))
      expect(second).toHaveLength(1)
      expect(second[0]).not.toBe(`main.s-${sc.first.slice(0, 8)}`)
    })

    it('bills less input through the hold than the same session sent as the client sent it', async () => {
      // The headline figure (docs/hold.md): each main step's request as holdfast sent it, and as the
      // client sent it (its own tools: a held step's client_tools, no injected tool), replayed in
      // order against two fresh fakes with the same cache model; billed input = uncached input +
      // 1.25 × cache writes + 0.1 × cache reads.
      const sums = { via: { input: 0, write: 0, read: 0 }, direct: { input: 0, write: 0, read: 0 } }
      const [viaFake, directFake] = [await startFakeUpstream(), await startFakeUpstream()]
      try {
        for (const r of sc.rows) {
          const n = Number(r.step)
          const meta = await sc.s.meta(n)
          if (meta.endpoint.split('?')[0] !== '/v1/messages') continue
          const sent = await sc.s.request(n)
          const tools = Array.isArray(sent.tools) ? (sent.tools as { name?: string }[]) : undefined
          const byName = new Map((tools ?? []).map((x) => [x.name, x]))
          const own = meta.client_tools ? meta.client_tools.map((name) => byName.get(name)) : tools
          const injected = new Set(meta.injected_tools)
          const clientTools = own?.filter((x) => x !== undefined && !injected.has(x.name ?? ''))
          const client = tools ? { ...sent, tools: clientTools } : sent
          for (const [fake, body, sum] of [
            [viaFake, sent, sums.via],
            [directFake, client, sums.direct],
          ] as const) {
            const res = await fetch(`${fake.anthropicBaseUrl}/v1/messages`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
              body: JSON.stringify({ ...body, stream: false }),
            })
            const u = ((await res.json()) as { usage: Record<string, number> }).usage
            sum.input += u.input_tokens ?? 0
            sum.write += u.cache_creation_input_tokens ?? 0
            sum.read += u.cache_read_input_tokens ?? 0
          }
        }
      } finally {
        await viaFake.close()
        await directFake.close()
      }
      const billed = (x: { input: number; write: number; read: number }): number =>
        x.input + 1.25 * x.write + 0.1 * x.read
      expect(sums.via.read + sums.via.write).toBeGreaterThan(0)
      expect(billed(sums.via)).toBeLessThanOrEqual(billed(sums.direct))
      if (process.env.HOLDFAST_SHOW)
        process.stdout.write(
          `${pkg} billed input: via holdfast ${billed(sums.via).toFixed(0)} ${JSON.stringify(sums.via)}, as the client sent it ${billed(sums.direct).toFixed(0)} ${JSON.stringify(sums.direct)}, saved ${(100 * (1 - billed(sums.via) / billed(sums.direct))).toFixed(1)} %\n`,
        )
    })

    it('gives every step one cause from the closed sets, beside the provider’s word (the row asks it)', async () => {
      // The closing note's table: each main step, what the provider said, holdfast's cause.
      const table = [
        '| step | the provider said | missed tokens | holdfast’s cause |',
        '| --- | --- | --- | --- |',
      ]
      const held: string[] = []
      for (const r of sc.rows) {
        const w = JSON.parse(await sc.s.cli('why', WS, 'main', r.step, '--json')) as {
          cause: string
          own_cause: string
          disagree: boolean
          provider: {
            said: string
            reason: string | null
            missed_input_tokens: number | null
            compared_with: string | null
            previous_answer?: string
            other_said?: string
          } | null
        }
        expect([...CLIENT_CAUSES, ...PROXY_CAUSES]).toContain(w.cause)
        // diagnostics: add asks on every step; a held step's prefix is the one the provider compared.
        expect(w.provider).not.toBeNull()
        if (w.cause === 'held')
          held.push(w.provider?.reason === 'tools_changed' ? `${r.step} ${w.provider.said}` : 'ok')
        const word = (said: string | undefined): string =>
          said === 'reason'
            ? `\`${w.provider?.reason}\``
            : said === 'no_miss'
              ? 'no divergence (`null`)'
              : `${said}`
        const said = !w.provider
          ? 'not asked'
          : w.provider.said === 'other'
            ? `${word(w.provider.other_said)}, against ${w.provider.compared_with} (not the previous step's ${w.provider.previous_answer})`
            : w.provider.said === 'not_compared'
              ? 'not compared (`previous_message_id: null`)'
              : word(w.provider.said)
        const own = w.disagree ? ` (its diff: \`${w.own_cause}\`)` : ''
        table.push(
          `| ${r.step} | ${said} | ${w.provider?.missed_input_tokens ?? '-'} | \`${w.cause}\`${own} |`,
        )
      }
      if (process.env.HOLDFAST_SHOW) process.stdout.write(`${pkg} causes:\n${table.join('\n')}\n`)
      // The provider never finds the tools of a held step changed: the hold re-sent them.
      expect(held.filter((h) => h !== 'ok')).toEqual([])
    })

    it('says a held step once, in words, in holdfast why', async () => {
      const held = sc.rows.find((r) => r.hold_reason === 'applied') as StepRow
      const why = await sc.s.cli('why', WS, 'main', held.step)
      const lines = why.trimEnd().split('\n')
      expect(lines[1]).toBe('  cause: held: the hold re-sent the previous tools array')
      expect(lines).toContainEqual(
        expect.stringMatching(
          /^ {2}the client (dropped .*|reordered its tools); the hold re-sent step \d{3}'s array$/,
        ),
      )
      expect(why).not.toMatch(/nothing ahead|changed tools: hold/)
      expect(new Set(lines).size).toBe(lines.length)
    })
  })
}
