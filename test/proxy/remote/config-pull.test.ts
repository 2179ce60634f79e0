/**
 * proxy/remote/config-pull.ts, against a bare repository served by `git http-backend` (and `git
 * daemon` for a config change reaching a running proxy): a config commit another clone pushed
 * reaches the proxy's next step; a lineage the hook refuses (unknown provider row), one that
 * diverged, and one ahead of the remote stay where they were, and the report says why; a new
 * lineage is created; a remote that does not answer moves nothing.
 */
import fs from 'node:fs'
import path from 'node:path'
import { pullConfig } from '../../../proxy/remote/config-pull'
import { readPullReport } from '../../../proxy/remote/state'
import { setRole } from '../../../proxy/store/config/edit'
import { Workspace } from '../../../proxy/store/workspace'
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream'
import { configFor, eventually, git, startProxy, tempHome, writeConfig } from '../../support/harness'
import {
  bareRepo,
  gitIn,
  type GitServer,
  startGitDaemon,
  startHttpBackend,
  tempDir,
} from '../../support/git-servers'

let base: string
let fake: FakeUpstream
beforeAll(async () => {
  fake = await startFakeUpstream()
})
afterAll(() => fake.close())
beforeEach(() => {
  base = tempDir()
})
afterEach(() => fs.rmSync(base, { recursive: true, force: true }))

/** In a clone of the remote: write providers.yaml on config/<lineage> and push it. */
function pushConfigFromClone(url: string, yaml: string, lineage = 'default'): string {
  const clone = path.join(base, `clone-${Math.random().toString(36).slice(2)}`)
  gitIn(base, 'clone', '--quiet', '--branch', `config/${lineage}`, url, clone)
  fs.writeFileSync(path.join(clone, 'providers.yaml'), yaml)
  gitIn(
    clone,
    '-c',
    'user.name=t',
    '-c',
    'user.email=t@t',
    'commit',
    '--quiet',
    '-am',
    `config from a teammate`,
  )
  gitIn(clone, 'push', '--quiet', 'origin', `HEAD:refs/heads/config/${lineage}`)
  return gitIn(clone, 'rev-parse', 'HEAD').trim()
}

const ROLE = (model: string, provider = 'anthropic') =>
  `roles:\n  reviewer: {provider: ${provider}, model: ${model}}\n`

describe('pullConfig', () => {
  let server: GitServer
  let home: string
  let ws: Workspace
  let url: string
  beforeEach(async () => {
    server = await startHttpBackend(base)
    home = tempHome()
    writeConfig(home, configFor(fake))
    ws = new Workspace(home, 'w')
    await ws.ensure()
    bareRepo(base, 'team.git')
    url = server.url('team.git')
    git(ws.repo.gitdir, 'remote', 'add', 'holdfast', url)
    git(ws.repo.gitdir, 'push', '--quiet', 'holdfast', 'config/default')
  })
  afterEach(async () => {
    await server.stop()
    fs.rmSync(home, { recursive: true, force: true })
  })
  const local = (lineage = 'default') => git(ws.repo.gitdir, 'rev-parse', `config/${lineage}`).trim()

  it('moves a lineage the remote fast-forwards, through the hook, and a new one is created', async () => {
    const tip = pushConfigFromClone(url, ROLE('claude-from-remote'))
    const exp = pushConfigFromClone(url, ROLE('claude-exp'), 'default')
    gitIn(path.join(base, 'team.git'), 'branch', 'config/exp', exp)
    const r = await pullConfig(ws, url, { timeoutMs: 30_000 })
    expect(r.error).toBeNull()
    expect(r.lineages).toEqual([
      expect.objectContaining({ lineage: 'default', outcome: 'moved', remote: exp }),
      expect.objectContaining({ lineage: 'exp', outcome: 'created', local: null, remote: exp }),
    ])
    expect(local()).toBe(exp)
    expect(local('exp')).toBe(exp)
    expect(git(ws.repo.gitdir, 'log', '--format=%H', 'config/default')).toContain(tip)
  })

  it('refuses a lineage whose providers.yaml names a row holdfast.yaml lacks, and leaves it where it was', async () => {
    const before = local()
    const bad = pushConfigFromClone(url, ROLE('m', 'nope'))
    const r = await pullConfig(ws, url, { timeoutMs: 30_000 })
    expect(r.lineages).toEqual([
      expect.objectContaining({ lineage: 'default', outcome: 'refused', local: before, remote: bad }),
    ])
    expect(r.lineages[0]?.reason).toMatch(
      /providers\.yaml: roles\.reviewer\.provider: "nope" is not a provider row/,
    )
    expect(local()).toBe(before)
  })

  it('leaves a diverged lineage, and one ahead of the remote, where they were', async () => {
    await setRole(
      ws.repo,
      'default',
      'local',
      { provider: 'anthropic', model: 'm' },
      configFor(fake).providers,
    )
    const ahead = local()
    let r = await pullConfig(ws, url, { timeoutMs: 30_000 })
    expect(r.lineages).toEqual([expect.objectContaining({ lineage: 'default', outcome: 'ahead' })])
    pushConfigFromClone(url, ROLE('elsewhere'))
    r = await pullConfig(ws, url, { timeoutMs: 30_000 })
    expect(r.lineages).toEqual([expect.objectContaining({ lineage: 'default', outcome: 'diverged' })])
    expect(r.lineages[0]?.reason).toMatch(/diverged/)
    expect(local()).toBe(ahead)
  })

  it('moves nothing when the remote does not answer, and says why', async () => {
    const before = local()
    pushConfigFromClone(url, ROLE('unseen'))
    await server.down()
    const r = await pullConfig(ws, url, { timeoutMs: 30_000 })
    expect(r.error).toMatch(/unable to access|Failed to connect|Connection refused/i)
    expect(r.lineages).toEqual([])
    expect(local()).toBe(before)
  })
})

describe('a running proxy and its remote', () => {
  let server: GitServer
  afterEach(() => server.stop())

  it('follows a config commit another clone pushed from its next step, and reports one the hook refused', async () => {
    server = await startGitDaemon(base)
    bareRepo(base, 'team.git')
    const url = server.url('team.git')
    const home = tempHome()
    const ws = new Workspace(home, 'default')
    writeConfig(home, configFor(fake))
    await ws.ensure()
    git(ws.repo.gitdir, 'remote', 'add', 'holdfast', url)
    git(ws.repo.gitdir, 'push', '--quiet', 'holdfast', 'config/default')
    const p = await startProxy({
      home,
      fake,
      config: { machine: 'a', remote: { fetch_interval_s: 1, push_delay_ms: 50, timeout_s: 30 } },
    })
    try {
      const ask = () =>
        fetch(`${p.url}/w/default/a/main/v1/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
          body: JSON.stringify({
            model: 'reviewer',
            max_tokens: 8,
            messages: [{ role: 'user', content: 'hi' }],
          }),
        }).then(async (r) => [r.status, await r.text()] as const)
      expect((await ask())[0]).toBe(200) // no role yet: "reviewer" goes upstream as the client sent it
      expect(JSON.parse(fake.received.at(-1)?.body.toString() ?? '{}').model).toBe('reviewer')
      const good = pushConfigFromClone(url, ROLE('claude-team-model'))
      await eventually(
        () => git(ws.repo.gitdir, 'rev-parse', 'config/default').trim() === good,
        20_000,
        'pulled',
      )
      fake.reset()
      expect((await ask())[0]).toBe(200)
      expect(JSON.parse(fake.received[0]?.body.toString() ?? '{}').model).toBe('claude-team-model')
      const bad = pushConfigFromClone(url, ROLE('m', 'nope'))
      await eventually(
        () => readPullReport(home, 'default')?.lineages[0]?.remote === bad,
        20_000,
        'the refusal reported',
      )
      expect(readPullReport(home, 'default')?.lineages[0]).toMatchObject({ outcome: 'refused', local: good })
      expect(git(ws.repo.gitdir, 'rev-parse', 'config/default').trim()).toBe(good)
      const health = (await (await fetch(`${p.url}/_holdfast/health`)).json()) as {
        remote: { config: { lineages: { outcome: string }[] } }[]
      }
      expect(health.remote[0]?.config.lineages[0]?.outcome).toBe('refused')
    } finally {
      await p.close()
    }
  })
})
