/**
 * proxy/remote/git.ts: git for the remote runs in the workspace's repository, is stopped with its
 * helpers past its time limit, never waits on a prompt for a credential, and reads the remote
 * named holdfast from the repository's own config only (a global one is ignored), again only
 * when that config changed.
 */
import fs from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import path from 'node:path'
import { failure, RemoteUrl, runGitIn } from '../../../proxy/remote/git'
import { gitIn, tempDir } from '../../support/git-servers'

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
