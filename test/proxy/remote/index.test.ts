/**
 * proxy/remote/index.ts, the remote as a running server sees it (git daemon on loopback): settings
 * and their defaults; a serve started on a home whose workspace gained a remote while it was down
 * pushes what the remote lacks at start; a serve stopped right after a step pushes it before it
 * exits, even with a long push delay; `remote.push: false` pushes nothing and still pulls config.
 */
import fs from 'node:fs'
import { pushOptions } from '../../../proxy/remote'
import { readPullReport } from '../../../proxy/remote/state'
import { Workspace } from '../../../proxy/store/workspace'
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream'
import { configFor, eventually, git, startProxy, type Proxy } from '../../support/harness'
import { bareRepo, gitIn, type GitServer, startGitDaemon, tempDir } from '../../support/git-servers'

const step = (p: Proxy, text: string) =>
  fetch(`${p.url}/w/default/a/main/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({
      model: 'claude-fake-1',
      max_tokens: 8,
      messages: [{ role: 'user', content: text }],
    }),
  }).then((r) => r.arrayBuffer())

const refsOf = (bare: string) => gitIn(bare, 'for-each-ref', '--format=%(refname) %(objectname)')

let base: string
let server: GitServer
let fake: FakeUpstream
let bare: string
beforeAll(async () => {
  fake = await startFakeUpstream()
})
afterAll(() => fake.close())
beforeEach(async () => {
  base = tempDir()
  server = await startGitDaemon(base)
  bare = bareRepo(base, 'team.git')
})
afterEach(async () => {
  await server.stop()
  fs.rmSync(base, { recursive: true, force: true })
})

describe('pushOptions', () => {
  it("takes holdfast.yaml's machine and remote settings, with the documented defaults", () => {
    expect(pushOptions(configFor(fake, { machine: 'ci-7' }))).toEqual({
      machine: 'ci-7',
      refs: 'auto',
      delayMs: 1000,
      retryMinMs: 1000,
      retryMaxMs: 300_000,
      timeoutMs: 120_000,
    })
    expect(
      pushOptions(configFor(fake, { machine: 'm', remote: { refs: 'heads', timeout_s: 5 } })),
    ).toMatchObject({
      refs: 'heads',
      timeoutMs: 5000,
    })
  })
})

describe('Remotes in a serve', () => {
  it('pushes at start what a remote set while serve was down lacks', async () => {
    const p = await startProxy({ fake, config: { machine: 'a', remote: { fetch_interval_s: 0 } } })
    try {
      await step(p, 'one')
      await step(p, 'two')
      await p.stop()
      git(p.repo(), 'remote', 'add', 'holdfast', server.url('team.git'))
      await p.restart()
      const tip = git(p.repo(), 'rev-parse', 'agents/main').trim()
      await eventually(() => refsOf(bare).includes(`refs/holdfast/a/agents/main ${tip}`), 20_000, 'caught up')
    } finally {
      await p.close()
    }
  })

  it('pushes a step committed just before it stops, whatever the push delay', async () => {
    const p = await startProxy({
      fake,
      config: { machine: 'a', remote: { fetch_interval_s: 0, push_delay_ms: 600_000 } },
    })
    try {
      await new Workspace(p.home, 'default').ensure()
      git(p.repo(), 'remote', 'add', 'holdfast', server.url('team.git'))
      await step(p, 'last words')
      await p.stop()
      const tip = git(p.repo(), 'rev-parse', 'agents/main').trim()
      expect(refsOf(bare)).toContain(`refs/holdfast/a/agents/main ${tip}`)
    } finally {
      await p.close()
    }
  })

  it('with remote.push false pushes nothing and still pulls config at start', async () => {
    const p = await startProxy({
      fake,
      config: { machine: 'a', remote: { push: false, fetch_interval_s: 0 } },
    })
    try {
      await new Workspace(p.home, 'default').ensure()
      await p.stop()
      git(p.repo(), 'remote', 'add', 'holdfast', server.url('team.git'))
      git(p.repo(), 'push', '--quiet', 'holdfast', 'config/default')
      await p.restart()
      await step(p, 'one')
      await p.stop()
      await eventually(() => readPullReport(p.home, 'default')?.lineages[0]?.outcome === 'up-to-date', 20_000)
      expect(refsOf(bare)).not.toContain('refs/holdfast/')
    } finally {
      await p.close()
    }
  })
})
