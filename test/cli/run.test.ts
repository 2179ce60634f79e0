/**
 * `holdfast run -- <command>`: the command gets the exports of `holdfast env` and the terminal,
 * its exit code is holdfast's; a serve it had to start records the command's steps and is
 * stopped (steps committed) when the command exits; a serve already running is used and left
 * running.
 */
import fs from 'node:fs'
import path from 'node:path'
import { configFor, startProxy, tempHome, writeConfig, type Proxy } from '../support/harness'
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream'
import { cliAsync, gitAsync } from '../support/repo-checks'
import { composeArgv } from '../../cli/run-with'

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
      expect(r.stderr).toMatch(/^holdfast: started serve on http:\/\/127\.0\.0\.1:\d+ for this command/)
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
      expect(JSON.parse(r.stdout.trim())).toEqual({ base: p.url, hints: '1' })
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
    expect(composeArgv(['codex', 'exec', 'hi'], base, undefined, true)).toEqual(['codex', 'exec', 'hi'])
  })
})
