/**
 * The read-side commands against a home with recorded steps (an in-process server, the CLI
 * spawned): `env` for the running server (and its refusal without one), `steps` as JSON and as a
 * table, `why`, `--help` on every command, and an unknown command.
 */
import fs from 'node:fs'
import path from 'node:path'
import { CommanderError } from 'commander'
import { buildProgram } from '../../cli/program'
import { eventually, startProxy, tempHome, type Proxy } from '../support/harness'
import { cliAsync, type Run } from '../support/repo-checks'

let p: Proxy
const elsewhere: string[] = []

const MODEL = 'claude-sonnet-4-5'
const tool = (name: string) => ({ name, description: `tool ${name}`, input_schema: { type: 'object' } })

async function step(base: string, tools: string[], messages: object[]): Promise<void> {
  const res = await fetch(`${base}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model: MODEL, max_tokens: 8, tools: tools.map(tool), messages }),
  })
  expect(res.status).toBe(200)
  await res.arrayBuffer()
}

beforeAll(async () => {
  p = await startProxy()
  const base = `${p.url}/w/default/a/cli`
  const first = { role: 'user', content: 'list the files' }
  await step(base, ['a', 'b'], [first])
  await step(base, ['a'], [first, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'more' }])
  await p.settled()
})
afterAll(async () => {
  await p.close()
  for (const h of elsewhere) fs.rmSync(h, { recursive: true, force: true })
})

const run = (...args: string[]): Promise<Run> => cliAsync([...args, '--home', p.home], { HOLDFAST_TOKEN: '' })

function ok(r: Run): string {
  expect(r.stderr).toBe('')
  expect(r.code).toBe(0)
  return r.stdout
}

/** A refusal: non-zero, one line on stderr, nothing on stdout. */
function refusal(r: Run): string {
  expect(r.code).not.toBe(0)
  expect(r.stdout).toBe('')
  const lines = r.stderr.trimEnd().split('\n')
  expect(lines).toHaveLength(1)
  return lines[0]!
}

describe('holdfast env', () => {
  it('prints the exports for the running server, addressed with --ws/--agent, and refuses without one', async () => {
    const noServer = tempHome()
    elsewhere.push(noServer)
    const stale = tempHome() // serve.json left by a server killed with -9: its pid is dead
    elsewhere.push(stale)
    fs.writeFileSync(
      path.join(stale, 'serve.json'),
      JSON.stringify({ url: 'http://127.0.0.1:1', pid: 2 ** 22 + 1, started_at: '', home: stale }),
    )
    const [plain, addressed, agentOnly, none, dead] = await Promise.all([
      run('env'),
      run('env', '--ws', 'proj', '--agent', 'worker'),
      run('env', '--agent', 'worker'),
      cliAsync(['env', '--home', noServer]),
      cliAsync(['env', '--home', stale]),
    ])
    // The home's token as Claude Code's header (no row here adds the operator's key: no key exports).
    const hints = `export ANTHROPIC_CUSTOM_HEADERS='x-holdfast-token: ${p.token}'\nexport CLAUDE_CODE_GATEWAY_HINT_HEADERS=1\n`
    expect(ok(plain)).toBe(`export ANTHROPIC_BASE_URL=${p.url}\nexport OPENAI_BASE_URL=${p.url}/v1\n${hints}`)
    const prefix = `${p.url}/w/proj/a/worker`
    expect(ok(addressed)).toBe(
      `export ANTHROPIC_BASE_URL=${prefix}\nexport OPENAI_BASE_URL=${prefix}/v1\n${hints}`,
    )
    expect(ok(agentOnly)).toContain(`export ANTHROPIC_BASE_URL=${p.url}/w/default/a/worker\n`)
    expect(refusal(none)).toMatch(/not running/)
    expect(refusal(dead)).toMatch(/not running/)

    // The printed base URL works: a step sent to it is recorded for that workspace and agent.
    const base = /ANTHROPIC_BASE_URL=(\S+)/.exec(addressed.stdout)![1]!
    await step(base, [], [{ role: 'user', content: 'hello' }])
    await p.settled()
    const rows = JSON.parse(ok(await run('steps', 'proj', 'worker', '--json'))) as { step: string }[]
    expect(rows.map((r) => r.step)).toEqual(['001'])
  })
})

describe('holdfast steps', () => {
  it('lists the steps as JSON rows and as a table', async () => {
    // A step the provider never answers stays in flight (and pending) while the server runs.
    p.fake.enqueue({ hang: true })
    const cut = new AbortController()
    const hanging = fetch(`${p.url}/w/default/a/busy/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: MODEL, max_tokens: 8, messages: [{ role: 'user', content: 'wait' }] }),
      signal: cut.signal,
    }).catch(() => undefined)
    let runs: Run[]
    try {
      await eventually(
        () => p.fake.received.some((r) => r.body.includes('"wait"')),
        5000,
        'the step to be sent',
      )
      runs = await Promise.all([
        run('steps', 'default', 'cli', '--json'),
        run('steps', 'default', 'cli'),
        run('steps', 'default', 'nobody'),
        run('steps', 'default', '..'),
        run('steps', 'default', 'busy', '--json'),
      ])
    } finally {
      cut.abort() // else the server would wait for it at close
      await hanging
    }
    const [json, text, empty, bad, busy] = runs as [Run, Run, Run, Run, Run]
    expect(JSON.parse(ok(busy))).toMatchObject([
      { step: '001', status: null, outcome: 'in flight', state: 'pending' },
    ])
    const rows = JSON.parse(ok(json)) as Record<string, unknown>[]
    expect(rows).toHaveLength(2)
    expect(rows[0]).toMatchObject({
      step: '001',
      model: MODEL,
      status: 200,
      outcome: 'ok',
      held: [],
      hold_reason: 'first-step',
      state: 'committed',
    })
    expect(rows[1]).toMatchObject({
      step: '002',
      status: 200,
      held: ['b'],
      reordered: false,
      hold_reason: 'applied',
      compaction: null,
      state: 'committed',
    })
    for (const r of rows) {
      expect(r.input).toEqual(expect.any(Number))
      expect(r.output).toEqual(expect.any(Number))
      expect(r.cache_read).toEqual(expect.any(Number))
      expect(r.total_ms).toEqual(expect.any(Number))
    }
    expect(rows[1]!.cache_read as number).toBeGreaterThan(0)

    const lines = ok(text).trimEnd().split('\n')
    expect(lines).toHaveLength(4)
    expect(lines[0]!.split(/\s{2,}/)).toEqual([
      'NNN',
      'time',
      'model',
      'status',
      'held',
      'compaction',
      'input',
      'cache read',
      'cache write',
      'output',
      'cost',
      'hold saved',
      'ttfb',
      'total',
      'state',
    ])
    expect(lines[1]).toMatch(new RegExp(`^001 .* ${MODEL} +200 +- +- .*committed$`))
    expect(lines[2]).toMatch(new RegExp(`^002 .* ${MODEL} +200 +b +- .*committed$`))
    // The totals row sums the token columns of the steps above it.
    const sum = (k: 'input' | 'cache_read' | 'cache_write' | 'output'): number =>
      rows.reduce((a, r) => a + (r[k] as number), 0)
    expect(lines[3]!.split(/\s{2,}/).slice(0, 10)).toEqual([
      'total',
      '-',
      '2 steps',
      '-',
      '-',
      '-',
      String(sum('input')),
      String(sum('cache_read')),
      String(sum('cache_write')),
      String(sum('output')),
    ])
    expect(refusal(empty)).toMatch(
      /^holdfast: no agent "nobody" in workspace "default"; its agents: .*\bcli\b/,
    )
    expect(refusal(bad)).toMatch(/agent/)
  })
})

describe('holdfast why', () => {
  it('explains a held step, as JSON and as text', async () => {
    const [json, text, missing] = await Promise.all([
      run('why', 'default', 'cli', '002', '--json'),
      run('why', 'default', 'cli', '2'),
      run('why', 'default', 'cli', '009'),
    ])
    const report = JSON.parse(ok(json)) as {
      step: string
      previous: string | null
      moves: { tools: boolean; model: boolean; system: boolean; head: boolean } | null
      hold: { applied: boolean; held: string[] }
      usage: { cache_read_tokens: number } | null
      summary: string[]
    }
    expect(report).toMatchObject({ step: '002', previous: '001', hold: { applied: true, held: ['b'] } })
    expect(report.moves).toMatchObject({ tools: false, model: false, system: false, head: false })
    expect(report.usage?.cache_read_tokens).toBeGreaterThan(0)
    const out = ok(text)
    expect(out.split('\n')[0]).toBe('step 002 of default/cli')
    expect(out).toContain("the client dropped b; the hold re-sent step 001's array")
    expect(out).not.toContain('changed tools: hold')
    expect(refusal(missing)).toMatch(/no step 009/)
  })
})

describe('the command line', () => {
  /** `holdfast <args>` through the real program definition, in process: exit code and output. */
  async function inProcess(args: string[]): Promise<{ code: number; out: string }> {
    const program = buildProgram()
    let out = ''
    for (const c of [program, ...program.commands]) {
      c.configureOutput({ writeOut: (s) => (out += s), writeErr: (s) => (out += s) })
    }
    try {
      await program.parseAsync(['node', 'holdfast', ...args])
      return { code: 0, out }
    } catch (err) {
      if (err instanceof CommanderError) return { code: err.exitCode, out }
      throw err
    }
  }

  it('has --help on every command and refuses an unknown one', async () => {
    const commands = ['serve', 'env', 'steps', 'why']
    // The process entry, spawned: top-level help and an unknown command.
    const [top, unknown] = await Promise.all([cliAsync(['--help']), cliAsync(['frobnicate'])])
    const usage = ok(top)
    expect(usage).toMatch(/^Usage: holdfast /)
    for (const c of commands) expect(usage).toContain(`  ${c}`)
    expect(unknown.code).not.toBe(0)
    expect(unknown.stdout).toBe('')
    expect(unknown.stderr).toMatch(/unknown command 'frobnicate'/)
    // Each command's help, through the same program definition.
    for (const c of commands) {
      const help = await inProcess([c, '--help'])
      expect(help.code).toBe(0)
      expect(help.out).toMatch(new RegExp(`^Usage: holdfast ${c} `))
      expect(help.out).toContain('--home <dir>')
      if (c === 'steps' || c === 'why') expect(help.out).toContain('--json')
    }
  })
})
