/**
 * The real Codex CLI (pinned) through `holdfast run -- codex exec …`, with Codex's built-in OpenAI
 * provider as a user has it (no `model_provider` of holdfast's in config.toml): `run` routes it by
 * Codex's own flag (`-c openai_base_url=…`); this provider speaks HTTP only and refuses the upgrade
 * holdfast passes on, so holdfast answers Codex's WebSocket try 426 and it falls back to HTTP at once, and the session is recorded as one chain with its session headers and prompt
 * cache key in meta.json and its turn metadata without repository URLs. Loopback only; bounded.
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { CODEX_BIN, CODEX_DUMMY_KEY, userCodexDirs, userCodexEnv } from '../support/codex'
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream'
import { configFor, tempHome, writeConfig } from '../support/harness'
import { cliAsync, gitAsync } from '../support/repo-checks'

let fake: FakeUpstream
let dir: string
beforeAll(async () => {
  fake = await startFakeUpstream()
  dir = tempHome()
})
afterAll(async () => {
  await fake.close()
  fs.rmSync(dir, { recursive: true, force: true })
})

test('holdfast run -- codex exec records the session through Codex’s own base-URL flag, after a 426 when the provider refuses the WebSocket', async () => {
  const dirs = userCodexDirs(dir)
  const { home, work } = dirs
  writeConfig(home, configFor(fake))
  // A work tree with a remote: Codex puts its URL in x-codex-turn-metadata, which meta.json keeps without it.
  for (const args of [
    ['init', '-q'],
    ['remote', 'add', 'origin', 'https://github.com/acme/widgets.git'],
  ])
    expect(spawnSync('git', args, { cwd: work }).status).toBe(0)
  fake.enqueue({ toolCalls: [{ name: 'exec_command', arguments: { cmd: 'echo holdfast-marker' } }] })
  fake.enqueue({ text: 'The command printed holdfast-marker.' })
  const started = Date.now()
  const r = await cliAsync(
    [
      'run',
      '--home',
      home,
      '--ws',
      'codexrun',
      '--',
      CODEX_BIN,
      'exec',
      '--skip-git-repo-check',
      '--sandbox',
      'workspace-write',
      '--cd',
      work,
      'Run `echo holdfast-marker` and tell me what it printed.',
    ],
    userCodexEnv(dirs),
    90_000,
  )
  expect({ code: r.code, stdout: r.stdout.trim() }).toEqual({
    code: 0,
    stdout: 'The command printed holdfast-marker.',
  })
  // No five WebSocket retries (5-10 s each run): the provider refused the upgrade holdfast passed on,
  // the 426 sent Codex to HTTP at once.
  expect(Date.now() - started).toBeLessThan(60_000)
  expect(r.stderr).not.toMatch(/Reconnecting/)
  expect(fake.received.map((x) => `${x.method} ${x.url}`)).toEqual([
    'GET /v1/responses',
    'POST /v1/responses',
    'POST /v1/responses',
  ])

  const repo = path.join(home, 'workspaces', 'codexrun', 'repo.git')
  const meta = async (n: string) =>
    JSON.parse(await gitAsync(repo, 'show', `agents/main:steps/main/${n}/meta.json`)) as {
      hold: { reason: string }
      usage: { cache_read_tokens: number }
      request_headers: Record<string, string>
      prompt_cache_key?: string
    }
  const [m1, m2] = [await meta('001'), await meta('002')]
  expect(m1.hold.reason).toBe('first-step')
  expect(m2.hold.reason).toBe('no-subtraction')
  expect(m2.usage.cache_read_tokens).toBeGreaterThan(0)
  const h = m1.request_headers
  expect(h.originator).toBe('codex_exec')
  expect(h['session-id']).toEqual(expect.any(String))
  expect(m1.prompt_cache_key).toEqual(expect.any(String))
  expect(JSON.parse(h['x-codex-turn-metadata'] as string)).toMatchObject({ session_id: h['session-id'] })
  expect(JSON.stringify(m1)).not.toContain('associated_remote_urls')
  // Codex sent the remote's URL to holdfast (and holdfast on to the provider); the record keeps it out.
  expect(String(fake.received[1]!.headers['x-codex-turn-metadata'])).toContain('acme/widgets')
  expect(JSON.stringify(m1)).not.toContain('acme/widgets')
  expect(JSON.stringify(m1)).not.toContain(CODEX_DUMMY_KEY)

  const steps = await cliAsync(['steps', 'codexrun', 'main', '--home', home])
  const why = await cliAsync(['why', 'codexrun', 'main', '002', '--home', home])
  expect(steps.stdout).toMatch(/^002 .* gpt-fake-1 +200 /m)
  expect(why.stdout).toMatch(/provider cache: read [1-9]/)
  if (process.env.HOLDFAST_SHOW) process.stdout.write(`${steps.stdout}\n${why.stdout}\n`)
}, 120_000)
