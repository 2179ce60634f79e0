/**
 * The real Codex CLI (pinned) through `holdfast run -- codex exec …` against a provider that speaks
 * the Responses WebSocket (test/support/fake-responses-ws.ts): Codex stays on its WebSocket (one
 * socket, no HTTP fallback, no reconnect line), holdfast carries it over one upstream socket, and
 * the session of three turns is one chain of steps with cache reads that `holdfast why` explains.
 * Loopback only; bounded.
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { CODEX_BIN, userCodexDirs, userCodexEnv } from '../support/codex'
import { startFakeResponsesWs, type FakeResponsesWs } from '../support/fake-responses-ws'
import { tempHome, writeConfig } from '../support/harness'
import { cliAsync, gitAsync } from '../support/repo-checks'

let fake: FakeResponsesWs
let dir: string
beforeAll(async () => {
  fake = await startFakeResponsesWs()
  dir = tempHome()
})
afterAll(async () => {
  await fake.close()
  fs.rmSync(dir, { recursive: true, force: true })
})

test('holdfast run -- codex exec stays on Codex’s WebSocket: one socket, three turns, one chain of steps with cache reads', async () => {
  const dirs = userCodexDirs(dir)
  const { home, work } = dirs
  writeConfig(home, {
    listen: { host: '127.0.0.1', port: 0 },
    defaults: { workspace: 'default', agent: 'main' },
    providers: {
      anthropic: { dialect: 'anthropic', base_url: 'http://127.0.0.1:9' },
      openai: { dialect: 'openai', base_url: fake.openaiBaseUrl },
    },
  })
  expect(spawnSync('git', ['init', '-q'], { cwd: work }).status).toBe(0)
  fake.enqueue({ toolCalls: [{ name: 'exec_command', arguments: { cmd: 'echo holdfast-one' } }] })
  fake.enqueue({ toolCalls: [{ name: 'exec_command', arguments: { cmd: 'echo holdfast-two' } }] })
  fake.enqueue({ text: 'Both commands printed their markers.' })
  const r = await cliAsync(
    [
      'run',
      '--home',
      home,
      '--ws',
      'codexws',
      '--',
      CODEX_BIN,
      'exec',
      '--skip-git-repo-check',
      '--sandbox',
      'workspace-write',
      '--cd',
      work,
      'Run `echo holdfast-one`, then `echo holdfast-two`, and tell me what they printed.',
    ],
    userCodexEnv(dirs),
    90_000,
  )
  expect({ code: r.code, stdout: r.stdout.trim() }).toEqual({
    code: 0,
    stdout: 'Both commands printed their markers.',
  })
  // It stayed on the socket: no fallback to HTTP, no reconnect.
  expect(r.stderr).not.toMatch(/Reconnecting|falling back|fallback to HTTP/i)
  expect(fake.posts).toHaveLength(0)
  expect(fake.upgrades).toHaveLength(1)
  const creates = fake.frames.filter(
    (f) => !f.binary && f.data.toString('utf8').includes('"response.create"'),
  )
  expect(creates.length).toBeGreaterThanOrEqual(3)

  const repo = path.join(home, 'workspaces', 'codexws', 'repo.git')
  const steps = (await gitAsync(repo, 'ls-tree', '--name-only', 'agents/main:steps/main/')).trim().split('\n')
  expect(steps.slice(0, 3)).toEqual(['001', '002', '003'])
  const meta = async (n: string) =>
    JSON.parse(await gitAsync(repo, 'show', `agents/main:steps/main/${n}/meta.json`)) as {
      websocket?: { kind: string; socket: number }
      usage: { cache_read_tokens: number }
      request_headers: Record<string, string>
    }
  const metas = await Promise.all(['001', '002', '003'].map(meta))
  expect(metas.map((m) => m.websocket?.kind)).toEqual(['create', 'create', 'create'])
  expect(new Set(metas.map((m) => m.websocket?.socket)).size).toBe(1)
  expect(metas[1]!.usage.cache_read_tokens).toBeGreaterThan(0)
  expect(metas[2]!.usage.cache_read_tokens).toBeGreaterThan(0)
  expect(metas[0]!.request_headers.originator).toBe('codex_exec')
  for (const n of ['002', '003']) {
    const why = await cliAsync(['why', 'codexws', 'main', n, '--home', home])
    expect(why.code).toBe(0)
    expect(why.stdout).toMatch(/^ {2}cause: [a-z_]+: /m)
    expect(why.stdout).toMatch(/provider cache: read [1-9]/)
    if (process.env.HOLDFAST_SHOW) process.stdout.write(`${why.stdout}\n`)
  }
}, 120_000)
