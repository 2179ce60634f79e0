/**
 * proxy/remote/git.ts: git for the remote runs in the workspace's repository, is stopped with its
 * helpers past its time limit, never waits on a prompt for a credential, carries limits of its
 * own that hold without serve (curl's low-speed bound, ssh keep-alives unless the user chose
 * their ssh), and reads the remote named holdfast from the repository's own config only (a
 * global one is ignored), again only when that config changed.
 */
import fs from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import path from 'node:path'
import {
  failure,
  LOW_SPEED_LIMIT,
  LOW_SPEED_TIME_S,
  RemoteUrl,
  remoteGitArgs,
  runGitIn,
  SSH_COMMAND,
} from '../../../proxy/remote/git'
import { bareRepo, gitIn, startHttpBackend, tempDir } from '../../support/git-servers'

let dir: string
let repo: string
const savedHome = process.env.HOME
beforeEach(() => {
  dir = tempDir()
  repo = path.join(dir, 'repo.git')
  gitIn(dir, 'init', '--quiet', '--bare', repo)
})
afterEach(() => {
  process.env.HOME = savedHome
  fs.rmSync(dir, { recursive: true, force: true })
})

describe('runGitIn', () => {
  it("runs git in the repository and resolves with its exit and output, a failure's reason in one line", async () => {
    const ok = await runGitIn(repo, ['rev-parse', '--is-bare-repository'])
    expect([ok.code, ok.stdout.trim(), ok.timedOut]).toEqual([0, 'true', false])
    const bad = await runGitIn(repo, ['rev-parse', '--verify', 'nope'])
    expect(bad.code).not.toBe(0)
    expect(failure(bad)).toMatch(/Needed a single revision/)
  })

  it('stops a git that hangs on a remote, with its helper, at the time limit', async () => {
    const sockets: net.Socket[] = []
    const closed: Promise<void>[] = []
    const srv = net.createServer((s) => {
      sockets.push(s)
      closed.push(new Promise((r) => s.once('close', () => r())))
      s.on('error', () => undefined)
      s.resume() // accepts, reads, never answers
    })
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r))
    const port = (srv.address() as net.AddressInfo).port
    try {
      const t0 = Date.now()
      const r = await runGitIn(repo, ['ls-remote', `http://127.0.0.1:${port}/x.git`], {
        timeoutMs: 500,
        remote: true,
      })
      expect(r.timedOut).toBe(true)
      expect(failure(r, 500)).toBe('git went 500 ms without finishing or progress and was stopped')
      expect(Date.now() - t0).toBeLessThan(15_000)
      // git-remote-http (the helper holding the connection) is gone too: its socket closes
      await Promise.all(closed)
    } finally {
      for (const s of sockets) s.destroy()
      srv.close()
    }
  })

  it('stops git when its signal aborts', async () => {
    const srv = net.createServer((s) => {
      s.on('error', () => undefined)
      s.resume()
    })
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r))
    const port = (srv.address() as net.AddressInfo).port
    try {
      const abort = new AbortController()
      const running = runGitIn(repo, ['ls-remote', `http://127.0.0.1:${port}/x.git`], {
        remote: true,
        signal: abort.signal,
      })
      abort.abort()
      expect((await running).timedOut).toBe(true)
    } finally {
      srv.close()
    }
  })

  it('fails at once, without a prompt, when the remote asks for a credential git does not have', async () => {
    const srv = http.createServer((_req, res) => {
      res.writeHead(401, { 'www-authenticate': 'Basic realm="team"' })
      res.end()
    })
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r))
    const port = (srv.address() as net.AddressInfo).port
    try {
      const r = await runGitIn(repo, ['ls-remote', `http://127.0.0.1:${port}/x.git`], {
        timeoutMs: 30_000,
        remote: true,
      })
      expect(r.timedOut).toBe(false)
      expect(r.code).not.toBe(0)
      expect(r.stderr).toMatch(/terminal prompts disabled|could not read Username|Authentication failed/)
    } finally {
      srv.close()
    }
  })
})

describe('the limits a remote git carries', () => {
  const limits = [
    '-c',
    `http.lowSpeedLimit=${LOW_SPEED_LIMIT}`,
    '-c',
    `http.lowSpeedTime=${LOW_SPEED_TIME_S}`,
  ]

  it("puts curl's low-speed bound and a keep-alive ssh before git's own arguments", () => {
    expect(remoteGitArgs(['push', 'holdfast', 'a:b'], { PATH: '/bin' }, false)).toEqual([
      ...limits,
      '-c',
      `core.sshCommand=${SSH_COMMAND}`,
      'push',
      'holdfast',
      'a:b',
    ])
    expect(SSH_COMMAND).toMatch(/BatchMode=yes.*ServerAliveInterval=15.*ServerAliveCountMax=2/)
  })

  it('leaves the ssh command alone when the user chose one (core.sshCommand, GIT_SSH_COMMAND or GIT_SSH)', () => {
    expect(remoteGitArgs(['fetch'], {}, true)).toEqual([...limits, 'fetch'])
    expect(remoteGitArgs(['fetch'], { GIT_SSH_COMMAND: 'ssh -i k' }, false)).toEqual([...limits, 'fetch'])
    expect(remoteGitArgs(['fetch'], { GIT_SSH: '/usr/bin/plink' }, false)).toEqual([...limits, 'fetch'])
  })

  it('are what a remote git runs with, and a core.sshCommand in the config is kept', async () => {
    const get = async (key: string): Promise<string> =>
      (await runGitIn(repo, ['config', '--get', key], { remote: true })).stdout.trim()
    expect(await get('http.lowSpeedLimit')).toBe(String(LOW_SPEED_LIMIT))
    expect(await get('http.lowSpeedTime')).toBe(String(LOW_SPEED_TIME_S))
    expect(await get('core.sshCommand')).toBe(SSH_COMMAND)
    gitIn(repo, 'config', 'core.sshCommand', 'ssh -F /dev/null')
    expect(await get('core.sshCommand')).toBe('ssh -F /dev/null')
    // git that talks to no remote gets none of them
    expect((await runGitIn(repo, ['config', '--get', 'http.lowSpeedTime'])).code).toBe(1)
  })

  it('still pushes to a real remote', async () => {
    const server = await startHttpBackend(dir)
    try {
      const team = bareRepo(dir, 'team.git')
      const work = path.join(dir, 'work')
      gitIn(dir, 'init', '--quiet', work)
      gitIn(
        work,
        '-c',
        'user.name=t',
        '-c',
        'user.email=t@t',
        'commit',
        '--quiet',
        '--allow-empty',
        '-m',
        'one',
      )
      const head = gitIn(work, 'rev-parse', 'HEAD').trim()
      gitIn(work, 'push', '--quiet', repo, 'HEAD:refs/heads/main')
      gitIn(repo, 'remote', 'add', 'holdfast', server.url('team.git'))
      const r = await runGitIn(repo, ['push', '--porcelain', 'holdfast', 'refs/heads/main:refs/heads/main'], {
        timeoutMs: 30_000,
        remote: true,
      })
      expect([r.code, r.timedOut]).toEqual([0, false])
      expect(gitIn(team, 'rev-parse', 'refs/heads/main').trim()).toBe(head)
    } finally {
      await server.stop()
    }
  })
})

describe('RemoteUrl', () => {
  it("reads the remote named holdfast from the repository's own config, and follows changes to it", async () => {
    const url = new RemoteUrl(repo)
    expect(await url.get()).toBeUndefined()
    expect(url.changed()).toBe(false)
    gitIn(repo, 'remote', 'add', 'holdfast', 'git://127.0.0.1:1/team.git')
    expect(url.changed()).toBe(true)
    expect(await url.get()).toBe('git://127.0.0.1:1/team.git')
    gitIn(repo, 'remote', 'remove', 'holdfast')
    expect(await url.get()).toBeUndefined()
  })

  it("ignores a remote named holdfast in the user's global config", async () => {
    const home = path.join(dir, 'home')
    fs.mkdirSync(home)
    fs.writeFileSync(
      path.join(home, '.gitconfig'),
      '[remote "holdfast"]\n\turl = git://127.0.0.1:1/everyone.git\n',
    )
    process.env.HOME = home
    expect(gitIn(repo, 'config', '--get', 'remote.holdfast.url').trim()).toBe(
      'git://127.0.0.1:1/everyone.git',
    )
    expect(await new RemoteUrl(repo).get()).toBeUndefined()
  })

  it('reads as no remote where there is no repository', async () => {
    expect(await new RemoteUrl(path.join(dir, 'absent.git')).get()).toBeUndefined()
  })
})
