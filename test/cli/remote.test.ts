/**
 * `holdfast remote set|pull|fetch|show`: two machines (two homes, two serves, machines a and b)
 * and one remote served by `git daemon`. `set` names the remote and the running serve pushes at
 * once; `fetch` brings the other machine's agents in, so `agents`, `steps --machine` and `why
 * --machine` show them; a config commit a teammate pushed reaches both machines through `pull`
 * (and the next step), an invalid one is refused and `roles` says why; `show` reports how far each
 * agent was pushed; a URL with a password and a workspace without a remote are refused.
 */
import fs from 'node:fs'
import path from 'node:path'
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream'
import { eventually, git, startProxy, type Proxy } from '../support/harness'
import { bareRepo, gitIn, type GitServer, startGitDaemon, tempDir } from '../support/git-servers'
import { readPushState } from '../../proxy/remote/state'
import { runCli } from './inprocess.support'

const settings = (machine: string) => ({
  machine,
  remote: { push_delay_ms: 50, retry_min_ms: 100, retry_max_ms: 400, fetch_interval_s: 0, timeout_s: 30 },
})

let base: string
let server: GitServer
let fake: FakeUpstream
let a: Proxy
let b: Proxy
let url: string
let bare: string

const step = (p: Proxy, model: string, text: string) =>
  fetch(`${p.url}/w/default/a/main/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model, max_tokens: 8, messages: [{ role: 'user', content: text }] }),
  }).then(async (r) => {
    await r.arrayBuffer()
    return r.status
  })

/** A teammate's clone of the remote: providers.yaml on config/default, committed and pushed. */
function teammateConfig(yaml: string): string {
  const clone = path.join(base, `clone-${Math.random().toString(36).slice(2)}`)
  gitIn(base, 'clone', '--quiet', '--branch', 'config/default', url, clone)
  fs.writeFileSync(path.join(clone, 'providers.yaml'), yaml)
  gitIn(clone, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '--quiet', '-am', 'team roles')
  gitIn(clone, 'push', '--quiet', 'origin', 'HEAD:refs/heads/config/default')
  return gitIn(clone, 'rev-parse', 'HEAD').trim()
}

beforeAll(async () => {
  base = tempDir()
  fake = await startFakeUpstream()
  server = await startGitDaemon(base)
  bare = bareRepo(base, 'team.git')
  url = server.url('team.git')
  a = await startProxy({ fake, config: settings('a') })
  b = await startProxy({ fake, config: settings('b') })
  expect(await step(a, 'claude-fake-1', 'a one')).toBe(200)
  expect(await step(a, 'claude-fake-1', 'a two')).toBe(200)
  expect(await step(b, 'claude-fake-1', 'b one')).toBe(200)
  await Promise.all([a.settled(), b.settled()])
})
afterAll(async () => {
  await a.close()
  await b.close()
  await server.stop()
  await fake.close()
  fs.rmSync(base, { recursive: true, force: true })
})

describe('holdfast remote, two machines and one remote', () => {
  it('sets the remote, and each running serve pushes its agents under its machine at once', async () => {
    const set = await runCli(['remote', 'set', 'default', url, '--home', a.home])
    expect(set.stderr).toBe('')
    expect(set.stdout).toContain(`default: remote holdfast is now ${url}`)
    expect(set.stdout).toContain('agents are pushed as refs/holdfast/a/agents/<agent> (machine a)')
    expect(set.stdout).toContain('the remote answers: 0 config lineages')
    expect(set.stdout).toContain('the running serve is pushing')
    git(a.repo(), 'push', '--quiet', 'holdfast', 'config/default') // the team's config starts from a's
    expect((await runCli(['remote', 'set', 'default', url, '--home', b.home])).stdout).toContain(
      'the remote answers: 1 config lineage',
    )
    const refs = () => gitIn(bare, 'for-each-ref', '--format=%(refname)')
    await eventually(
      () => refs().includes('refs/holdfast/a/agents/main') && refs().includes('refs/holdfast/b/agents/main'),
      20_000,
      'both machines pushed',
    )
    await eventually(
      () => [a, b].every((p) => readPushState(p.home, 'default')?.agents.main !== undefined),
      10_000,
      'both push states written',
    )
    const again = await runCli(['remote', 'set', 'default', url, '--home', a.home])
    expect(again.stdout).toContain(`remote holdfast is already ${url}`)
  })

  it("fetches the other machine's agents, read by agents, steps --machine and why --machine", async () => {
    const fetched = await runCli(['remote', 'fetch', 'default', '--home', b.home])
    expect(fetched.stdout).toContain('a: 1 agent (main); 1 new or updated')
    expect((await runCli(['remote', 'fetch', 'default', '--home', a.home])).stdout).toContain(
      'b: 1 agent (main); 1 new or updated',
    )
    const rows = JSON.parse((await runCli(['agents', 'default', '--home', b.home, '--json'])).stdout) as {
      agent: string
      machine: string | null
      steps: number
      pushed: number | null
    }[]
    expect(rows.map((r) => [r.agent, r.machine, r.steps, r.pushed])).toEqual([
      ['main', null, 1, 1],
      ['main', 'a', 2, null],
    ])
    const table = (await runCli(['agents', 'default', '--wide', '--home', b.home])).stdout.split('\n')
    expect(table[0]).toMatch(/^agent\s+machine\s+pushed\s+parent/)
    const narrow = (await runCli(['agents', 'default', '--home', b.home])).stdout.split('\n')
    expect(narrow[0]).toMatch(/^agent\s+machine\s+pushed\s+kind\s/)
    expect(table[1]).toMatch(/^main\s+this\s+1\s/)
    expect(table[2]).toMatch(/^main\s+a\s+-\s/)
    const steps = JSON.parse(
      (await runCli(['steps', 'default', 'main', '--machine', 'a', '--home', b.home, '--json'])).stdout,
    ) as { step: string; state: string }[]
    expect(steps.map((s) => [s.step, s.state])).toEqual([
      ['001', 'committed'],
      ['002', 'committed'],
    ])
    const why = await runCli(['why', 'default', 'main', '002', '--machine', 'a', '--home', b.home])
    expect(why.stdout).toContain('step 002 of default/main')
    const none = await runCli(['steps', 'default', 'main', '--machine', 'c', '--home', b.home])
    expect(none.stderr).toContain('no agents of machine "c" in workspace "default"')
  })

  it("brings a teammate's config commit to both machines, validated, and their next steps follow it", async () => {
    const team = teammateConfig('roles:\n  reviewer: {provider: anthropic, model: claude-team-model}\n')
    for (const p of [a, b]) {
      const pulled = await runCli(['remote', 'pull', 'default', '--home', p.home])
      expect(pulled.code).toBe(0)
      expect(pulled.stdout).toMatch(
        new RegExp(`config/default: \\w{8} → ${team.slice(0, 8)} \\(validated by the hook\\)`),
      )
      expect((await runCli(['roles', '--ws', 'default', '--home', p.home])).stdout).toMatch(
        /reviewer\s+anthropic\s+claude-team-model/,
      )
      fake.reset()
      expect(await step(p, 'reviewer', 'review this')).toBe(200)
      expect(JSON.parse(fake.received[0]?.body.toString() ?? '{}').model).toBe('claude-team-model')
    }
  })

  it('refuses an invalid config from the remote, leaves the lineage, and roles says why', async () => {
    const before = git(b.repo(), 'rev-parse', 'config/default').trim()
    teammateConfig('roles:\n  reviewer: {provider: nowhere, model: m}\n')
    const pulled = await runCli(['remote', 'pull', 'default', '--home', b.home])
    expect(pulled.code).toBe(1)
    expect(pulled.stdout).toMatch(
      /config\/default: refused, stays at \w{8}, not \w{8}: providers\.yaml: roles\.reviewer\.provider: "nowhere" is not a provider row/,
    )
    expect(git(b.repo(), 'rev-parse', 'config/default').trim()).toBe(before)
    const roles = (await runCli(['roles', '--ws', 'default', '--home', b.home])).stdout
    expect(roles).toMatch(
      /remote holdfast \(git:\/\/.*\): config\/default stays at \w{8}, not \w{8}: providers\.yaml/,
    )
    expect(roles).toMatch(/reviewer\s+anthropic\s+claude-team-model/)
  })

  it('shows how far each agent was pushed, the last pull and the fetched teammates', async () => {
    const shown = await runCli(['remote', 'show', 'default', '--home', a.home])
    expect(shown.stdout).toContain(`default: remote holdfast ${url}, machine a`)
    expect(shown.stdout).toMatch(/main: up to step 00[23] \(\w{8}\)/)
    expect(shown.stdout).toContain('teammate b: main')
    const json = JSON.parse(
      (await runCli(['remote', 'show', 'default', '--home', a.home, '--json'])).stdout,
    ) as {
      machine: string
      push: { agents: Record<string, { step: number }> }
    }
    expect(json.machine).toBe('a')
    expect(json.push.agents.main?.step).toBeGreaterThanOrEqual(2)
  })

  it('refuses a URL that carries a password, and pull or fetch without a remote', async () => {
    const secret = await runCli([
      'remote',
      'set',
      'default',
      'https://ada:s3cret@git.example/t.git',
      '--home',
      a.home,
    ])
    expect(secret.code).toBe(1)
    expect(secret.stderr).toContain('https://ada:***@git.example/t.git carries a password')
    expect(secret.stderr).not.toContain('s3cret')
    git(b.repo(), 'remote', 'remove', 'holdfast')
    try {
      const pull = await runCli(['remote', 'pull', 'default', '--home', b.home])
      expect(pull.stderr).toContain(
        'has no remote named holdfast; set one with `holdfast remote set default <url>`',
      )
      expect((await runCli(['remote', 'fetch', 'default', '--home', b.home])).code).toBe(1)
    } finally {
      git(b.repo(), 'remote', 'add', 'holdfast', url)
    }
  })
})
