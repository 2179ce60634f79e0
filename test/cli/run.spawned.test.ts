/**
 * `holdfast run -- <command>`: the command gets the exports of `holdfast env` (addressed to the
 * current directory's name as its workspace unless --ws says) and the terminal, its exit code is
 * holdfast's; a serve it had to start records the command's steps and is stopped (steps committed)
 * when the last run using it exits; a serve already running is used and left running; two runs
 * share one serve, the first exiting while the second keeps working, and two started at the same
 * moment end up on one serve.
 */
import fs from 'node:fs'
import path from 'node:path'
import { configFor, startProxy, tempHome, writeConfig, type Proxy } from '../support/harness'
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream'
import { cliAsync, gitAsync } from '../support/repo-checks'
import { composeArgv, workspaceOf } from '../../cli/run'
import { ROOT } from '../support/harness'

/** A command (node) that prints its base URL and hint setting, sends one step, and exits 3. */
const AGENT = `
  const base = process.env.ANTHROPIC_BASE_URL
  console.log(JSON.stringify({ base, hints: process.env.CLAUDE_CODE_GATEWAY_HINT_HEADERS }))
  fetch(base + '/v1/messages', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }),
  }).then((r) => r.text()).then(() => process.exit(3), () => process.exit(4))`

let fake: FakeUpstream
beforeAll(async () => {
  fake = await startFakeUpstream()
})
afterAll(() => fake.close())

describe('holdfast run', () => {
  it('starts serve for the command, passes its exit code, and stops serve with the step committed', async () => {
    const home = tempHome()
    try {
      writeConfig(home, configFor(fake))
      const r = await cliAsync(
        ['run', '--home', home, '--ws', 'proj', '--', process.execPath, '-e', AGENT],
        {},
        60_000,
      )
      expect(r.code).toBe(3)
      const printed = JSON.parse(r.stdout.trim()) as { base: string; hints: string }
      expect(printed.base).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/w\/proj\/a\/main$/)
      expect(printed.hints).toBe('1')
      // (A serve slow to finish its commits adds a line saying the run waits for it.)
      expect(r.stderr.split('\n')[0]).toMatch(
        /^holdfast: started serve on http:\/\/127\.0\.0\.1:\d+ \(log: .*\); it stops when the last holdfast run ends$/,
      )
      expect(fs.existsSync(path.join(home, 'serve.json'))).toBe(false)
      const repo = path.join(home, 'workspaces', 'proj', 'repo.git')
      expect((await gitAsync(repo, 'log', '--format=%s', 'agents/main')).split('\n')[0]).toMatch(
        /^step 001: claude-sonnet-4-5 \[main\]$/,
      )
    } finally {
      fs.rmSync(home, { recursive: true, force: true })
    }
  })

  it('uses the serve that runs already and leaves it running', async () => {
    const p: Proxy = await startProxy({ fake })
    try {
      const r = await cliAsync(['run', '--home', p.home, '--', process.execPath, '-e', AGENT], {}, 60_000)
      expect(r.code).toBe(3)
      expect(r.stderr).toBe('')
      // Without --ws, the workspace is the current directory's name.
      expect(JSON.parse(r.stdout.trim())).toEqual({
        base: `${p.url}/w/${workspaceOf(ROOT)}/a/main`,
        hints: '1',
      })
      const health = await fetch(`${p.url}/_holdfast/health`)
      expect(health.status).toBe(200)
    } finally {
      await p.close()
    }
  })

  it('refuses a command that cannot be run, in one line, and stops the serve it started', async () => {
    const home = tempHome()
    try {
      writeConfig(home, configFor(fake))
      const r = await cliAsync(['run', '--home', home, '--', 'no-such-command-holdfast'], {}, 60_000)
      expect(r.code).toBe(1)
      expect(r.stderr.trimEnd().split('\n').pop()).toMatch(
        /^holdfast: cannot run no-such-command-holdfast: .*ENOENT/,
      )
      expect(fs.existsSync(path.join(home, 'serve.json'))).toBe(false)
    } finally {
      fs.rmSync(home, { recursive: true, force: true })
    }
  })
})

/**
 * A command that sends one step, says so in `<MARK>.sent`, waits for the file `GO` to exist, sends a
 * second step and prints what it saw: a run that stays up for as long as the test wants.
 */
const WAITER = `
  const fs = require('fs')
  const base = process.env.ANTHROPIC_BASE_URL
  const send = (text) => fetch(base + '/v1/messages', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 8, messages: [{ role: 'user', content: text }] }),
  }).then((r) => r.text().then(() => r.status), (e) => String(e))
  ;(async () => {
    const first = await send('one')
    fs.writeFileSync(process.env.MARK + '.sent', String(first))
    while (!fs.existsSync(process.env.GO)) await new Promise((r) => setTimeout(r, 20))
    const second = await send('two')
    console.log(JSON.stringify({ base, first, second }))
  })()`

/** Resolves once `file` exists (polling: the other process writes it). */
async function appears(file: string, ms = 60_000): Promise<void> {
  const until = Date.now() + ms
  while (!fs.existsSync(file)) {
    if (Date.now() > until) throw new Error(`${file} did not appear within ${ms} ms`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

describe('holdfast run shares its serve', () => {
  it('keeps the serve up while a second run uses it after the first one exited, and stops it after the last', async () => {
    const home = tempHome()
    try {
      writeConfig(home, configFor(fake))
      const at = (n: string) => path.join(home, n)
      const run = (agent: string) =>
        cliAsync(
          ['run', '--home', home, '--ws', 'two', '--agent', agent, '--', process.execPath, '-e', WAITER],
          { MARK: at(agent), GO: at(`${agent}.go`) },
          120_000,
        )
      const a = run('a')
      await appears(at('a.sent'))
      const b = run('b')
      await appears(at('b.sent'))
      fs.writeFileSync(at('a.go'), '')
      const ra = await a
      expect(ra.code).toBe(0)
      // The first run's command exited; the serve it started goes on for the second one.
      const info = JSON.parse(fs.readFileSync(at('serve.json'), 'utf8')) as { url: string; leased: boolean }
      expect(info.leased).toBe(true)
      fs.writeFileSync(at('b.go'), '')
      const rb = await b
      expect(rb.code).toBe(0)
      const [sa, sb] = [ra, rb].map(
        (r) => JSON.parse(r.stdout.trim()) as { base: string; first: number; second: number },
      )
      expect(sa).toEqual({ base: `${info.url}/w/two/a/a`, first: 200, second: 200 })
      expect(sb).toEqual({ base: `${info.url}/w/two/a/b`, first: 200, second: 200 })
      expect(ra.stderr).toMatch(/^holdfast: started serve on /)
      expect(rb.stderr).not.toMatch(/started serve/) // (it may say it waits for the serve to commit)
      // The last run waited for the serve to commit and stop.
      expect(fs.existsSync(at('serve.json'))).toBe(false)
      const repo = path.join(home, 'workspaces', 'two', 'repo.git')
      for (const agent of ['a', 'b'])
        expect(
          (await gitAsync(repo, 'log', '--format=%s', `agents/${agent}`)).split('\n').slice(0, 2),
        ).toEqual([`step 002: claude-sonnet-4-5 [${agent}]`, `step 001: claude-sonnet-4-5 [${agent}]`])
    } finally {
      fs.rmSync(home, { recursive: true, force: true })
    }
  })

  it('puts two runs started at the same moment on one serve', async () => {
    const home = tempHome()
    try {
      writeConfig(home, configFor(fake))
      const run = (agent: string) =>
        cliAsync(
          ['run', '--home', home, '--ws', 'same', '--agent', agent, '--', process.execPath, '-e', AGENT],
          {},
          120_000,
        )
      const [r1, r2] = await Promise.all([run('x'), run('y')])
      expect([r1.code, r2.code]).toEqual([3, 3])
      const bases = [r1, r2].map((r) => (JSON.parse(r.stdout.trim()) as { base: string }).base)
      expect(new URL(bases[0] as string).origin).toBe(new URL(bases[1] as string).origin)
      // One of them started it; the other waited for it instead of failing with "already running".
      expect([r1.stderr, r2.stderr].filter((e) => e.startsWith('holdfast: started serve on '))).toHaveLength(
        1,
      )
      expect(r1.stderr + r2.stderr).not.toMatch(/already running/)
      expect(fs.existsSync(path.join(home, 'serve.json'))).toBe(false)
    } finally {
      fs.rmSync(home, { recursive: true, force: true })
    }
  })
})

describe('holdfast run and the home’s token', () => {
  it("hands Claude Code the home's token for the MCP endpoint, read from <home>/token", async () => {
    const home = tempHome()
    try {
      writeConfig(home, configFor(fake))
      fs.writeFileSync(path.join(home, 'token'), 'tok-from-the-home\n', { mode: 0o600 })
      // A stand-in named claude: it prints the arguments and the variables it was given.
      const bin = path.join(home, 'bin')
      fs.mkdirSync(bin)
      const claude = path.join(bin, 'claude')
      fs.writeFileSync(
        claude,
        `#!${process.execPath}\nconsole.log(JSON.stringify({ argv: process.argv.slice(2), headers: process.env.ANTHROPIC_CUSTOM_HEADERS }))\n`,
        { mode: 0o755 },
      )
      const r = await cliAsync(
        ['run', '--home', home, '--ws', 'tok', '--', claude, '-p', 'hi'],
        { CLAUDE_CONFIG_DIR: home },
        60_000,
      )
      expect(r.code).toBe(0)
      const seen = JSON.parse(r.stdout.trim()) as { argv: string[]; headers: string }
      expect(seen.argv[0]).toBe('--mcp-config')
      expect(JSON.parse(seen.argv[1] as string)).toEqual({
        mcpServers: {
          holdfast: {
            type: 'http',
            url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/w\/tok\/a\/main\/mcp$/),
            headers: { 'x-holdfast-token': 'tok-from-the-home' },
          },
        },
      })
      expect(seen.argv[2]).toBe('--settings') // holdfast statusline, for this session
      expect(seen.argv.slice(4)).toEqual(['-p', 'hi'])
      expect(seen.headers).toBe('x-holdfast-token: tok-from-the-home')
    } finally {
      fs.rmSync(home, { recursive: true, force: true })
    }
  })
})

describe('workspaceOf', () => {
  it('is the directory’s name, made a usable workspace name', () => {
    expect(workspaceOf('/home/me/holdfast')).toBe('holdfast')
    expect(workspaceOf('/home/me/my project (2)')).toBe('my-project-2-')
    expect(workspaceOf('/home/me/.config')).toBe('config')
    expect(workspaceOf('/')).toBe('default')
  })
})

describe('composeArgv', () => {
  it('connects Claude Code to the MCP endpoint of its address, and runs anything else as given', () => {
    const base = 'http://127.0.0.1:8787/w/proj/a/main'
    expect(composeArgv(['claude', '-p', 'hi'], base, undefined, true)).toEqual([
      'claude',
      '--mcp-config',
      JSON.stringify({ mcpServers: { holdfast: { type: 'http', url: `${base}/mcp` } } }),
      '-p',
      'hi',
    ])
    expect(composeArgv(['/usr/local/bin/claude'], base, 'tok', true)[2]).toBe(
      JSON.stringify({
        mcpServers: {
          holdfast: { type: 'http', url: `${base}/mcp`, headers: { 'x-holdfast-token': 'tok' } },
        },
      }),
    )
    expect(composeArgv(['claude', '-p', 'hi'], base, undefined, false)).toEqual(['claude', '-p', 'hi'])
    expect(composeArgv(['codex', 'exec', 'hi'], base, undefined, true)).toEqual([
      'codex',
      '-c',
      `openai_base_url="${base}/v1"`,
      'exec',
      'hi',
    ])
    expect(composeArgv(['node', 'x.js'], base, undefined, true)).toEqual(['node', 'x.js'])
  })
})
