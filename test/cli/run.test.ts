/**
 * cli/run (`holdfast run`), in process against a home whose serve.json names a live process
 * (so no serve is started): the command gets the `holdfast env` exports for its address (the
 * current directory's name as the workspace and holdfast.yaml's agent when not given, the token
 * as a header), its exit code is
 * holdfast's (128+n for a signal), a command named `claude` also gets `--mcp-config` for the
 * agent's MCP endpoint unless --no-mcp, a bad name is refused before anything runs, and the SIGINT
 * handler it installs is gone afterwards. (test/cli/run.spawned.test.ts spawns it to start and stop a serve.)
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { composeArgv, hasOwnStatusLine, workspaceOf } from '../../cli/run'
import { tempHome } from '../support/harness'
import { runCli } from './inprocess.support'

const URL = 'http://127.0.0.1:8787'
const TOKEN = 'run-token-0123456789'
let home: string
/** Claude Code's user settings directory for these runs: empty unless a test writes one. */
let claudeConfig: string
const savedToken = process.env.HOLDFAST_TOKEN
const savedConfigDir = process.env.CLAUDE_CONFIG_DIR

beforeAll(() => {
  delete process.env.HOLDFAST_TOKEN
  home = tempHome()
  claudeConfig = path.join(home, 'claude-config')
  fs.mkdirSync(claudeConfig)
  process.env.CLAUDE_CONFIG_DIR = claudeConfig
  fs.writeFileSync(
    path.join(home, 'holdfast.yaml'),
    `token: ${TOKEN}\ndefaults: {workspace: team, agent: boss}\n`,
  )
  fs.writeFileSync(
    path.join(home, 'serve.json'),
    JSON.stringify({ url: URL, pid: process.pid, started_at: new Date().toISOString(), home }),
  )
})
afterAll(() => {
  if (savedToken !== undefined) process.env.HOLDFAST_TOKEN = savedToken
  if (savedConfigDir === undefined) delete process.env.CLAUDE_CONFIG_DIR
  else process.env.CLAUDE_CONFIG_DIR = savedConfigDir
  fs.rmSync(home, { recursive: true, force: true })
})

/** A node one-liner that writes its environment's holdfast exports (and argv) to `file`, then runs `then`. */
function probe(file: string, then: string): string[] {
  const keys = [
    'ANTHROPIC_BASE_URL',
    'OPENAI_BASE_URL',
    'ANTHROPIC_CUSTOM_HEADERS',
    'CLAUDE_CODE_GATEWAY_HINT_HEADERS',
  ]
  const script = `const env = {}; for (const k of ${JSON.stringify(keys)}) env[k] = process.env[k];
require('fs').writeFileSync(${JSON.stringify(file)}, JSON.stringify({ env, argv: process.argv.slice(1) })); ${then}`
  return [process.execPath, '-e', script]
}

const read = (file: string): { env: Record<string, string>; argv: string[] } =>
  JSON.parse(fs.readFileSync(file, 'utf8')) as { env: Record<string, string>; argv: string[] }

describe('holdfast run with a serve running', () => {
  it("gives the command its address's exports and token, and returns its exit code without starting a serve", async () => {
    const file = path.join(home, 'ws-only.json')
    const sigints = process.listenerCount('SIGINT')
    const r = await runCli(['run', '--home', home, '--ws', 'proj', '--', ...probe(file, 'process.exit(7)')])
    expect(r).toEqual({ code: 7, stdout: '', stderr: '' })
    expect(read(file).env).toEqual({
      ANTHROPIC_BASE_URL: `${URL}/w/proj/a/boss`,
      OPENAI_BASE_URL: `${URL}/w/proj/a/boss/v1`,
      ANTHROPIC_CUSTOM_HEADERS: `x-holdfast-token: ${TOKEN}`,
      CLAUDE_CODE_GATEWAY_HINT_HEADERS: '1',
    })
    expect(fs.existsSync(path.join(home, 'serve.log'))).toBe(false)
    expect(process.listenerCount('SIGINT')).toBe(sigints)
  })

  it("addresses the current directory's name as the workspace without --ws, the default agent without --agent, and exits 0 with the command", async () => {
    const here = workspaceOf(process.cwd())
    const file = path.join(home, 'plain.json')
    const r = await runCli(['run', '--home', home, '--', ...probe(file, '')])
    expect(r.code).toBe(0)
    expect(read(file).env.ANTHROPIC_BASE_URL).toBe(`${URL}/w/${here}/a/boss`)
    const agentOnly = path.join(home, 'agent-only.json')
    await runCli(['run', '--home', home, '--agent', 'w1', '--', ...probe(agentOnly, '')])
    expect(read(agentOnly).env.ANTHROPIC_BASE_URL).toBe(`${URL}/w/${here}/a/w1`)
  })

  it('exits 128 plus the signal number when the command is killed by a signal', async () => {
    const file = path.join(home, 'signal.json')
    const term = await runCli([
      'run',
      '--home',
      home,
      '--',
      ...probe(file, "process.kill(process.pid, 'SIGTERM')"),
    ])
    expect(term.code).toBe(143)
    const kill = await runCli([
      'run',
      '--home',
      home,
      '--',
      ...probe(file, "process.kill(process.pid, 'SIGKILL')"),
    ])
    expect(kill.code).toBe(137)
  })

  it("connects a command named claude to its agent's MCP endpoint with the token, and not with --no-mcp", async () => {
    const bin = fs.mkdtempSync(path.join(home, 'bin-'))
    const claude = path.join(bin, 'claude')
    const file = path.join(home, 'claude.json')
    fs.writeFileSync(
      claude,
      `#!${process.execPath}\nrequire('fs').writeFileSync(${JSON.stringify(file)}, JSON.stringify({ env: {}, argv: process.argv.slice(2) }))\n`,
      { mode: 0o755 },
    )
    const r = await runCli(['run', '--home', home, '--ws', 'proj', '--agent', 'a1', '--', claude, '-p', 'hi'])
    expect(r.code).toBe(0)
    const { argv } = read(file)
    expect(argv[0]).toBe('--mcp-config')
    expect(JSON.parse(argv[1]!)).toEqual({
      mcpServers: {
        holdfast: { type: 'http', url: `${URL}/w/proj/a/a1/mcp`, headers: { 'x-holdfast-token': TOKEN } },
      },
    })
    expect(argv[2]).toBe('--settings')
    expect(argv.slice(4)).toEqual(['-p', 'hi'])
    await runCli(['run', '--home', home, '--no-mcp', '--no-statusline', '--', claude, '-p', 'hi'])
    expect(read(file).argv).toEqual(['-p', 'hi'])
  })

  it('makes holdfast statusline Claude Code’s status line when its settings have none, and the line it runs answers', async () => {
    const bin = fs.mkdtempSync(path.join(home, 'bin-'))
    const claude = path.join(bin, 'claude')
    const file = path.join(home, 'claude-sl.json')
    fs.writeFileSync(
      claude,
      `#!${process.execPath}\nrequire('fs').writeFileSync(${JSON.stringify(file)}, JSON.stringify({ env: {}, argv: process.argv.slice(2) }))\n`,
      { mode: 0o755 },
    )
    const r = await runCli(['run', '--home', home, '--no-mcp', '--', claude, '-p', 'hi'])
    expect(r.code).toBe(0)
    const { argv } = read(file)
    expect(argv.slice(0, 1)).toEqual(['--settings'])
    const settings = JSON.parse(argv[1]!) as { statusLine: { type: string; command: string } }
    expect(settings.statusLine.type).toBe('command')
    expect(settings.statusLine.command).toMatch(new RegExp(` statusline --home ${home}$`))
    // Claude Code runs the command with its JSON on stdin; it prints one line and exits 0.
    const ran = spawnSync('sh', ['-c', settings.statusLine.command], {
      input: JSON.stringify({ session_id: 'no-such-session' }),
      encoding: 'utf8',
      timeout: 30_000,
    })
    expect(ran.status).toBe(0)
    expect(ran.stdout.split('\n').length).toBeLessThanOrEqual(2)
    // A status line of the user's own is left alone.
    fs.writeFileSync(
      path.join(claudeConfig, 'settings.json'),
      '{"statusLine":{"type":"command","command":"mine"}}',
    )
    try {
      await runCli(['run', '--home', home, '--no-mcp', '--', claude, '-p', 'hi'])
      expect(read(file).argv).toEqual(['-p', 'hi'])
    } finally {
      fs.rmSync(path.join(claudeConfig, 'settings.json'))
    }
  })

  it('refuses a bad agent name before running anything, and a command that cannot run in one line', async () => {
    const file = path.join(home, 'never.json')
    const bad = await runCli(['run', '--home', home, '--agent', '../x', '--', ...probe(file, '')])
    expect(bad.code).toBe(1)
    expect(bad.stderr).toMatch(/^holdfast: .*agent/)
    expect(fs.existsSync(file)).toBe(false)
    const missing = await runCli(['run', '--home', home, '--', 'no-such-command-holdfast'])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toMatch(/^holdfast: cannot run no-such-command-holdfast: .*ENOENT.*\n$/)
  })
})

describe('composeArgv', () => {
  it('returns a copy for any other command, and nothing for an empty argv', () => {
    const argv = ['claude-code', 'x']
    const out = composeArgv(argv, URL, undefined, true)
    expect(out).toEqual(argv)
    expect(out).not.toBe(argv)
    expect(composeArgv([], URL, 'tok', true)).toEqual([])
  })
})

describe('hasOwnStatusLine', () => {
  it('finds a statusLine in the user’s or the project’s Claude Code settings, and none in a broken file', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hf-sl-'))
    try {
      const user = path.join(dir, 'user')
      const project = path.join(dir, 'project')
      fs.mkdirSync(path.join(project, '.claude'), { recursive: true })
      fs.mkdirSync(user, { recursive: true })
      const env = { CLAUDE_CONFIG_DIR: user }
      expect(hasOwnStatusLine(project, env)).toBe(false)
      fs.writeFileSync(
        path.join(user, 'settings.json'),
        '{"statusLine": {"type": "command", "command": "mine"}}',
      )
      expect(hasOwnStatusLine(project, env)).toBe(true)
      fs.writeFileSync(path.join(user, 'settings.json'), '{not json')
      expect(hasOwnStatusLine(project, env)).toBe(false)
      fs.writeFileSync(
        path.join(project, '.claude', 'settings.local.json'),
        '{"statusLine": {"command": "x"}}',
      )
      expect(hasOwnStatusLine(project, env)).toBe(true)
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
