/**
 * The proxy under test: a fresh home in a temp dir, the fake upstream, and `holdfast serve`
 * started in-process on a free loopback port (or spawned, for kill -9 and CLI tests).
 * Invariant: everything a test starts is stopped by `close()`, and the temp home is removed.
 *
 * The admin surface and the MCP endpoint require the home's token (proxy/http/access.ts). A test's
 * `fetch` to those paths of a proxy started here carries it as a client of this home would (the
 * CLI reads `<home>/token`), unless the request sets `x-holdfast-token` or `authorization` itself;
 * `rawFetch` is fetch untouched, for the tests of the refusals. Provider paths get nothing added.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import readline from 'node:readline'
import { type HoldfastConfig, parseConfig } from '../../proxy/store/config'
import { homeToken } from '../../proxy/store/token'
import { startServer, type RunningServer } from '../../proxy/serve'
import { createLogger, type Logger, silentLogger } from '../../proxy/process/log'
import type { AnyPlugin } from '../../plugins/instance'
import { startFakeUpstream, type FakeUpstream } from './fake-upstream'

export const ROOT = path.join(__dirname, '..', '..')

/** The test's own fetch, untouched: what a client that knows no token sends. */
export const rawFetch: typeof fetch = globalThis.fetch

/** The token of each proxy this harness started, by its origin (`http://127.0.0.1:<port>`). */
const tokens = new Map<string, string>()

/** The paths that require the token whatever the config: the admin surface and the MCP endpoint. */
const guarded = (pathname: string): boolean => pathname.startsWith('/_holdfast/') || /\/mcp$/.test(pathname)

function withHomeToken(input: Parameters<typeof fetch>[0], init?: RequestInit): Parameters<typeof fetch> {
  const request = input instanceof Request ? input : undefined
  const url = new URL(request ? request.url : String(input))
  const token = tokens.get(url.origin)
  if (token === undefined || !guarded(url.pathname)) return [input, init]
  const headers = new Headers(init?.headers ?? request?.headers)
  if (headers.has('x-holdfast-token') || headers.has('authorization')) return [input, init]
  headers.set('x-holdfast-token', token)
  return [input, { ...init, headers }]
}

globalThis.fetch = (input, init) => rawFetch(...withHomeToken(input, init))

/** The token the home's clients send: the configured one (env or holdfast.yaml), else `<home>/token`. */
export function tokenOf(home: string): string | undefined {
  const file = path.join(home, 'holdfast.yaml')
  return homeToken(home, parseConfig(fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '', file))
}

/** Let this test's fetch carry `home`'s token to the proxy at `url` (admin and MCP paths only). */
export function knowToken(url: string, home: string): void {
  const token = tokenOf(home)
  if (token) tokens.set(new URL(url).origin, token)
}

export const REGISTER = path.join(ROOT, 'scripts', 'register.js')
export const CLI = path.join(ROOT, 'cli', 'entry.ts')

const testLog = () =>
  process.env.HOLDFAST_TEST_LOG ? createLogger(process.env.HOLDFAST_TEST_LOG) : silentLogger()

export function tempHome(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-test-'))
}

export function configFor(fake: FakeUpstream, extra: Partial<HoldfastConfig> = {}): HoldfastConfig {
  return {
    listen: { host: '127.0.0.1', port: 0 },
    defaults: { workspace: 'default', agent: 'main' },
    ...extra,
    providers: {
      anthropic: { dialect: 'anthropic', base_url: fake.anthropicBaseUrl },
      openai: { dialect: 'openai', base_url: fake.openaiBaseUrl },
      ...(extra.providers ?? {}),
    },
  }
}

/** Write `config` as `<home>/holdfast.yaml` (JSON is YAML), mode 0600 as serve writes its own. */
export function writeConfig(home: string, config: HoldfastConfig): void {
  const file = path.join(home, 'holdfast.yaml')
  fs.writeFileSync(file, JSON.stringify(config, null, 2), { mode: 0o600 })
  fs.chmodSync(file, 0o600)
}

export interface Proxy {
  home: string
  fake: FakeUpstream
  server: RunningServer
  url: string
  /** The home's token (generated at the first start unless the config names one). */
  token: string
  /** The bare repository of a workspace. */
  repo(ws?: string): string
  /** Settles when every request in flight has finished and every queued commit has landed. */
  settled(): Promise<unknown>
  /** Stop the proxy (finishing steps and commits); the fake and home stay. */
  stop(): Promise<void>
  /** Start the proxy again on the same home (a restart). */
  restart(): Promise<void>
  close(): Promise<void>
}

export async function startProxy(
  opts: {
    config?: Partial<HoldfastConfig>
    fake?: FakeUpstream
    home?: string
    /** Plugin objects listed by name in `config.plugins`, like built-ins (no module loading in jest). */
    plugins?: Readonly<Record<string, AnyPlugin>>
    /** Where the server logs (a test that reads its log lines); default: silent unless debugging. */
    log?: Logger
  } = {},
): Promise<Proxy> {
  const fake = opts.fake ?? (await startFakeUpstream())
  const home = opts.home ?? tempHome()
  const config = configFor(fake, opts.config)
  writeConfig(home, config)
  let server = await startServer({ home, log: opts.log ?? testLog(), port: 0, plugins: opts.plugins })
  knowToken(server.url, home)
  const p: Proxy = {
    home,
    fake,
    server,
    url: server.url,
    token: tokenOf(home) as string,
    repo: (ws = 'default') => path.join(home, 'workspaces', ws, 'repo.git'),
    settled: () => server.ctx.drain(),
    stop: () => server.close(),
    restart: async () => {
      await server.close()
      tokens.delete(new URL(server.url).origin)
      server = await startServer({ home, log: opts.log ?? testLog(), port: 0, plugins: opts.plugins })
      knowToken(server.url, home)
      p.server = server
      p.url = server.url
    },
    close: async () => {
      tokens.delete(new URL(server.url).origin)
      await server.close()
      if (!opts.fake) await fake.close()
      fs.rmSync(home, { recursive: true, force: true })
    },
  }
  return p
}

/** Run git against a repository and return stdout (throws on a non-zero exit). */
export function git(repo: string, ...args: string[]): string {
  const r = spawnSync('git', ['-C', repo, ...args], { encoding: 'buffer' })
  if (r.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${r.stderr.toString()}`)
  return r.stdout.toString('utf8')
}

export function gitBytes(repo: string, ...args: string[]): Buffer {
  const r = spawnSync('git', ['-C', repo, ...args], { encoding: 'buffer' })
  if (r.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${r.stderr.toString()}`)
  return r.stdout
}

/** Wait until `check` returns true (polling), or fail after `ms`. */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  ms = 5000,
  what = 'condition',
): Promise<void> {
  const until = Date.now() + ms
  let last: unknown
  while (Date.now() < until) {
    try {
      if (await check()) return
    } catch (err) {
      last = err // not yet: e.g. the branch does not exist until the first commit
    }
    await new Promise((r) => setTimeout(r, 20))
  }
  throw new Error(`timed out waiting for ${what}${last ? `; last error: ${String(last)}` : ''}`)
}

/** Run the CLI in a child process (no build needed) and collect its output. */
export function cli(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['-r', REGISTER, CLI, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout: 45_000,
  })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

export interface Spawned {
  child: ChildProcess
  url: string
  /** stderr collected so far. */
  stderr(): string
  kill(signal?: NodeJS.Signals): Promise<number | null>
}

/** Spawn `holdfast serve` and wait for its first stdout line. */
export async function spawnServe(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  /** Node options before the CLI (`-r test/support/disk-faults.js`). */
  nodeArgs: string[] = [],
): Promise<Spawned> {
  const child = spawn(process.execPath, [...nodeArgs, '-r', REGISTER, CLI, 'serve', ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let err = ''
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()))
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)))
  const line = await new Promise<string>((resolve, reject) => {
    const rl = readline.createInterface({ input: child.stdout as NodeJS.ReadableStream })
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${err}`)), 45_000)
    rl.once('line', (l) => {
      clearTimeout(timer)
      resolve(l)
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`serve exited with ${code}: ${err}`))
    })
  })
  const m = /^holdfast listening on (http:\/\/\S+)$/.exec(line)
  if (!m) throw new Error(`unexpected first line: ${line}`)
  const home = args[args.indexOf('--home') + 1]
  if (args.includes('--home') && home) knowToken(m[1] as string, home)
  return {
    child,
    url: m[1] as string,
    stderr: () => err,
    kill: async (signal = 'SIGTERM') => {
      tokens.delete(new URL(m[1] as string).origin)
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
      return exited
    },
  }
}
