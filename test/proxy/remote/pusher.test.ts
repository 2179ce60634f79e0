/**
 * proxy/remote/pusher.ts, against real git servers on loopback (`git daemon` with receive-pack,
 * and `git http-backend` behind node:http): a workspace whose repository has a remote named
 * `holdfast` pushes its agents' branches to `refs/holdfast/<machine>/agents/<agent>`, byte-equal;
 * a remote that is down for a while gets everything once it is back, in order; a ref that does
 * not fast-forward is kept on both sides (the local steps pushed beside it), the local records untouched; a remote that refuses
 * custom refs gets `refs/heads/holdfast/…`; a workspace without the remote pushes nothing.
 */
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { eventually, git, startProxy, tempHome, type Proxy } from '../../support/harness'
import { silentLogger } from '../../../proxy/process/log'
import { Pusher } from '../../../proxy/remote/pusher'
import {
  bareRepo,
  gitIn,
  type GitServer,
  startGitDaemon,
  startHttpBackend,
  tempDir,
} from '../../support/git-servers'
import { readPushState } from '../../../proxy/remote/state'
import { Workspace } from '../../../proxy/store/workspace'

const REMOTE_CONFIG = {
  machine: 'laptop-a',
  remote: { push_delay_ms: 50, retry_min_ms: 100, retry_max_ms: 400, fetch_interval_s: 0, timeout_s: 30 },
}

const post = (p: Proxy, agent: string, text: string) =>
  fetch(`${p.url}/w/default/a/${agent}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({
      model: 'claude-fake-1',
      max_tokens: 8,
      messages: [{ role: 'user', content: text }],
    }),
  }).then(async (r) => {
    await r.arrayBuffer()
    return r.status
  })

/** Create the workspace and name its remote (`git remote add <name> <url>`), as a user would. */
async function addRemote(p: Proxy, url: string, name = 'holdfast'): Promise<void> {
  await new Workspace(p.home, 'default').ensure()
  git(p.repo(), 'remote', 'add', name, url)
}

/** The remote's refs as ref → oid (empty when none). */
function remoteRefs(bare: string): Map<string, string> {
  const out = gitIn(bare, 'for-each-ref', '--format=%(refname) %(objectname)')
  return new Map(
    out
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split(' ') as [string, string]),
  )
}

let base: string
beforeEach(() => {
  base = tempDir()
})
afterEach(() => fs.rmSync(base, { recursive: true, force: true }))

describe.each([
  ['git daemon', startGitDaemon],
  ['git http-backend', startHttpBackend],
] as const)('pushing over %s', (_name, start) => {
  let server: GitServer
  let p: Proxy
  beforeEach(async () => {
    server = await start(base)
    p = await startProxy({ config: REMOTE_CONFIG })
  })
  afterEach(async () => {
    await p.close()
    await server.stop()
  })

  it("pushes every agent's steps under the machine's namespace, byte-equal to the local records", async () => {
    const bare = bareRepo(base, 'team.git')
    expect(await post(p, 'main', 'one')).toBe(200)
    await p.settled()
    git(p.repo(), 'remote', 'add', 'holdfast', server.url('team.git'))
    expect(await post(p, 'main', 'two')).toBe(200)
    expect(await post(p, 'side', 'three')).toBe(200)
    await p.settled()
    const local = () => ({
      main: git(p.repo(), 'rev-parse', 'agents/main').trim(),
      side: git(p.repo(), 'rev-parse', 'agents/side').trim(),
    })
    await eventually(
      () =>
        remoteRefs(bare).get('refs/holdfast/laptop-a/agents/main') === local().main &&
        remoteRefs(bare).get('refs/holdfast/laptop-a/agents/side') === local().side,
      20_000,
      'both agents pushed',
    )
    for (const file of ['request.json', 'meta.json']) {
      expect(gitIn(bare, 'show', `refs/holdfast/laptop-a/agents/main:steps/main/002/${file}`)).toBe(
        git(p.repo(), 'show', `agents/main:steps/main/002/${file}`),
      )
    }
    expect([...remoteRefs(bare).keys()].filter((r) => !r.startsWith('refs/holdfast/laptop-a/'))).toEqual([])
    // the two agents may have gone in two pushes: the state is written after each
    const pushed = () => readPushState(p.home, 'default')?.agents
    await eventually(() => pushed()?.main?.step === 2 && pushed()?.side?.step === 1, 10_000, 'state written')
    expect(readPushState(p.home, 'default')).toMatchObject({
      machine: 'laptop-a',
      form: 'custom',
      agents: { main: { step: 2, commit: local().main }, side: { step: 1, commit: local().side } },
      last_error: null,
    })
  })
})

describe('a remote that goes down, refuses, or has no custom refs', () => {
  let server: GitServer
  let p: Proxy
  beforeEach(async () => {
    server = await startGitDaemon(base)
    p = await startProxy({ config: REMOTE_CONFIG })
  })
  afterEach(async () => {
    await p.close()
    await server.stop()
  })

  it('retries while the remote is down and, once it is back, has pushed every step, in order', async () => {
    const bare = bareRepo(base, 'team.git')
    await addRemote(p, server.url('team.git'))
    expect(await post(p, 'main', 'before')).toBe(200)
    await eventually(() => remoteRefs(bare).has('refs/holdfast/laptop-a/agents/main'), 20_000, 'first push')
    await server.down()
    for (const text of ['a', 'b', 'c', 'd']) expect(await post(p, 'main', text)).toBe(200)
    await p.settled()
    await eventually(
      () => (readPushState(p.home, 'default')?.last_error ?? '') !== '',
      20_000,
      'a failed push recorded',
    )
    const health = async () =>
      (
        (await (await fetch(`${p.url}/_holdfast/health`)).json()) as {
          remote: { workspace: string; phase: string; failures: number }[]
        }
      ).remote[0]
    // between two retries (a retry in flight shows `pushing`)
    await eventually(async () => (await health())?.phase === 'retrying', 20_000, 'health says retrying')
    expect(await health()).toMatchObject({ workspace: 'default' })
    expect((await health())?.failures).toBeGreaterThan(0)
    await server.up()
    const tip = git(p.repo(), 'rev-parse', 'agents/main').trim()
    await eventually(
      () => remoteRefs(bare).get('refs/holdfast/laptop-a/agents/main') === tip,
      20_000,
      'pushed after the remote came back',
    )
    const subjects = gitIn(bare, 'log', '--format=%s', 'refs/holdfast/laptop-a/agents/main')
      .split('\n')
      .filter((s) => s.startsWith('step'))
    expect(subjects.map((s) => s.slice(0, 8))).toEqual([
      'step 005',
      'step 004',
      'step 003',
      'step 002',
      'step 001',
    ])
    await eventually(() => readPushState(p.home, 'default')?.last_error === null, 5000, 'error cleared')
  })

  it('keeps both sides of a push that is not a fast-forward: the remote ref untouched, the local steps pushed beside it', async () => {
    const bare = bareRepo(base, 'team.git')
    // Someone else's history already sits where this machine's main would go.
    const other = path.join(base, 'other')
    gitIn(base, 'init', '--quiet', other)
    gitIn(other, '-c', 'user.name=x', '-c', 'user.email=x@x', 'commit', '--quiet', '--allow-empty', '-m', 'x')
    gitIn(other, 'push', '--quiet', bare, 'HEAD:refs/holdfast/laptop-a/agents/main')
    const theirs = remoteRefs(bare).get('refs/holdfast/laptop-a/agents/main')
    await addRemote(p, server.url('team.git'))
    expect(await post(p, 'main', 'one')).toBe(200)
    await p.settled()
    // Refused, compared with the remote's, and kept beside it: both histories stay.
    const side = 'refs/holdfast/laptop-a/diverged/main/after-000'
    const tip = git(p.repo(), 'rev-parse', 'agents/main').trim()
    await eventually(() => remoteRefs(bare).get(side) === tip, 20_000, 'pushed beside')
    await eventually(
      () => readPushState(p.home, 'default')?.diverged?.main?.pushed?.commit === tip,
      10_000,
      'state written',
    )
    expect(readPushState(p.home, 'default')?.diverged?.main).toMatchObject({ base_step: 0, side_ref: side })
    expect(readPushState(p.home, 'default')?.refused).toEqual({})
    expect(remoteRefs(bare).get('refs/holdfast/laptop-a/agents/main')).toBe(theirs)
    expect(git(p.repo(), 'log', '--format=%s', 'agents/main').split('\n')[0]).toMatch(/^step 001/)
  })

  it('pushes to refs/heads/holdfast/<machine>/… when the remote refuses other refs', async () => {
    const bare = bareRepo(base, 'team.git')
    const hook = path.join(bare, 'hooks', 'update')
    fs.writeFileSync(
      hook,
      '#!/bin/sh\ncase "$1" in refs/heads/*) exit 0 ;; esac\necho "only branches here" >&2\nexit 1\n',
    )
    fs.chmodSync(hook, 0o755)
    await addRemote(p, server.url('team.git'))
    expect(await post(p, 'main', 'one')).toBe(200)
    await p.settled()
    const tip = git(p.repo(), 'rev-parse', 'agents/main').trim()
    await eventually(
      () => remoteRefs(bare).get('refs/heads/holdfast/laptop-a/agents/main') === tip,
      20_000,
      'pushed under refs/heads',
    )
    await eventually(() => readPushState(p.home, 'default')?.form === 'heads', 5000, 'the form remembered')
  })

  it('keeps the refs/holdfast/ form when the remote refuses every ref, so one refusing push changes nothing for good', async () => {
    const bare = bareRepo(base, 'team.git')
    const hook = path.join(bare, 'hooks', 'update')
    fs.writeFileSync(hook, '#!/bin/sh\necho "closed for maintenance" >&2\nexit 1\n')
    fs.chmodSync(hook, 0o755)
    await addRemote(p, server.url('team.git'))
    expect(await post(p, 'main', 'one')).toBe(200)
    await p.settled()
    await eventually(() => readPushState(p.home, 'default')?.refused.main !== undefined, 20_000, 'refusal')
    expect(readPushState(p.home, 'default')?.form).toBe('custom')
    // The hook lets pushes in again: the next push goes under refs/holdfast/, as before.
    fs.rmSync(hook)
    expect(await post(p, 'main', 'two')).toBe(200)
    await p.settled()
    const tip = git(p.repo(), 'rev-parse', 'agents/main').trim()
    await eventually(
      () => remoteRefs(bare).get('refs/holdfast/laptop-a/agents/main') === tip,
      20_000,
      'pushed under refs/holdfast',
    )
    expect(remoteRefs(bare).has('refs/heads/holdfast/laptop-a/agents/main')).toBe(false)
  })

  it('pushes nothing from a workspace whose repository has no remote named holdfast', async () => {
    const bare = bareRepo(base, 'team.git')
    await addRemote(p, server.url('team.git'), 'origin')
    expect(await post(p, 'main', 'one')).toBe(200)
    await p.settled()
    const health = async () =>
      ((await (await fetch(`${p.url}/_holdfast/health`)).json()) as { remote: unknown[] }).remote
    // The pusher looked (it had a commit) and found no remote: health lists no pushing workspace.
    const remotes = p.server.ctx.remotes
    await eventually(() => remotes?.phases().get('default') === 'no-remote', 10_000, 'the pusher looked')
    expect(await health()).toEqual([])
    expect(remoteRefs(bare).size).toBe(0)
    expect(readPushState(p.home, 'default')).toBeUndefined()
  })
})

describe('Pusher.close', () => {
  it('stops a push hung on the network when its budget is spent, the records left for the next serve', async () => {
    const sockets: net.Socket[] = []
    const hung = net.createServer((sock) => {
      sockets.push(sock)
      sock.on('error', () => undefined)
      sock.resume() // accepts, reads, never answers
    })
    await new Promise<void>((r) => hung.listen(0, '127.0.0.1', r))
    const home = tempHome()
    try {
      const ws = new Workspace(home, 'default')
      await ws.ensure()
      git(
        ws.repo.gitdir,
        'remote',
        'add',
        'holdfast',
        `http://127.0.0.1:${(hung.address() as net.AddressInfo).port}/t.git`,
      )
      const tip = git(ws.repo.gitdir, 'rev-parse', 'config/default').trim()
      const pusher = new Pusher(
        ws,
        { machine: 'a', refs: 'auto', delayMs: 0, retryMinMs: 100, retryMaxMs: 100, timeoutMs: 120_000 },
        silentLogger(),
      )
      pusher.committed('main', 1, tip)
      await eventually(() => pusher.phase === 'pushing' && sockets.length > 0, 20_000, 'a push in flight')
      const t0 = Date.now()
      await pusher.close(500)
      expect(Date.now() - t0).toBeLessThan(10_000)
      expect(pusher.report.waiting).toBe(1)
    } finally {
      for (const sock of sockets) sock.destroy()
      hung.close()
      fs.rmSync(home, { recursive: true, force: true })
    }
  })
})
