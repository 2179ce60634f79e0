/**
 * Real git servers on loopback for the remote's tests: `git daemon` with receive-pack enabled
 * (git://), and `git http-backend` behind a small node:http server (smart HTTP). Each serves the
 * bare repositories under one directory, can be stopped and started again on the same port (a
 * remote that is down for a while), and is stopped by `stop()`. Invariant: loopback only; every
 * process a server starts is gone after `stop()`.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'

/** The environment git servers and test clones run with: none of a hook's or a user's GIT_* variables. */
export function cleanGitEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('GIT_')) env[k] = v
  return { ...env, GIT_CONFIG_NOSYSTEM: '1', ...extra }
}

/** `git <args>` (throws on failure, with git's stderr). */
export function gitIn(cwd: string, ...args: string[]): string {
  const r = spawnSync('git', args, { cwd, env: cleanGitEnv(), encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`git ${args.join(' ')} (in ${cwd}) failed: ${r.stderr}`)
  return r.stdout
}

/** A bare repository `<base>/<name>`, accepting anonymous pushes over HTTP too. */
export function bareRepo(base: string, name: string): string {
  const dir = path.join(base, name)
  gitIn(base, 'init', '--quiet', '--bare', dir)
  gitIn(dir, 'config', 'http.receivepack', 'true')
  return dir
}

async function freePort(): Promise<number> {
  const srv = net.createServer()
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r))
  const port = (srv.address() as net.AddressInfo).port
  await new Promise<void>((r) => srv.close(() => r()))
  return port
}

/** Resolves once something accepts connections on the port (bounded). */
async function listening(port: number, ms = 20_000): Promise<void> {
  const until = Date.now() + ms
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1')
      s.once('connect', () => (s.destroy(), resolve(true)))
      s.once('error', () => resolve(false))
    })
    if (ok) return
    if (Date.now() > until) throw new Error(`nothing listens on 127.0.0.1:${port}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

export interface GitServer {
  kind: 'daemon' | 'http'
  /** The URL of `<base>/<name>`. */
  url(name: string): string
  /** Stop serving (connections are refused), keeping the port for `start()`. */
  down(): Promise<void>
  /** Serve again on the same port. */
  up(): Promise<void>
  stop(): Promise<void>
}

/** `git daemon --enable=receive-pack` serving `base` on a loopback port. */
export async function startGitDaemon(base: string): Promise<GitServer> {
  const port = await freePort()
  let child: ChildProcess | undefined
  const up = async (): Promise<void> => {
    child = spawn(
      'git',
      [
        'daemon',
        '--reuseaddr',
        '--export-all',
        '--enable=receive-pack',
        '--informative-errors',
        `--base-path=${base}`,
        '--listen=127.0.0.1',
        `--port=${port}`,
        base,
      ],
      { env: cleanGitEnv(), stdio: ['ignore', 'ignore', 'pipe'], detached: true },
    )
    child.stderr?.resume()
    await listening(port)
  }
  const down = async (): Promise<void> => {
    const c = child
    child = undefined
    if (!c || c.exitCode !== null) return
    const exited = new Promise((r) => c.once('exit', r))
    try {
      process.kill(-(c.pid as number), 'SIGTERM') // the daemon and the children serving connections
    } catch {
      c.kill('SIGTERM')
    }
    await exited
  }
  await up()
  return { kind: 'daemon', url: (name) => `git://127.0.0.1:${port}/${name}`, up, down, stop: down }
}

const HTTP_MAIN = path.join(__dirname, 'git-http-main.ts')
const REGISTER = path.join(__dirname, '..', '..', 'scripts', 'register.js')

/**
 * `git http-backend` behind a node:http server on a loopback port (smart HTTP, pushes allowed), in
 * a process of its own: a test may then run git synchronously against it.
 */
export async function startHttpBackend(base: string): Promise<GitServer> {
  const port = await freePort()
  let child: ChildProcess | undefined
  const up = async (): Promise<void> => {
    const c = spawn(process.execPath, ['-r', REGISTER, HTTP_MAIN, base, String(port)], {
      env: cleanGitEnv(),
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    child = c
    await new Promise<void>((resolve, reject) => {
      c.stdout?.once('data', () => resolve())
      c.once('exit', (code) => reject(new Error(`the git http server exited with ${code}`)))
    })
  }
  const down = async (): Promise<void> => {
    const c = child
    child = undefined
    if (!c || c.exitCode !== null) return
    const exited = new Promise((r) => c.once('exit', r))
    c.kill('SIGTERM')
    await exited
  }
  await up()
  return { kind: 'http', url: (name) => `http://127.0.0.1:${port}/${name}`, up, down, stop: down }
}

/** A temp directory for a test's remotes and clones. */
export function tempDir(prefix = 'holdfast-remote-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix))
}
