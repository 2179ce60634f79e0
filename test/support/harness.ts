/**
 * The proxy under test: a fresh home in a temp dir, the fake upstream, and `holdfast serve`
 * started in-process on a free loopback port (or spawned, for kill -9 and CLI tests).
 * Invariant: everything a test starts is stopped by `close()`, and the temp home is removed.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import readline from 'node:readline'
import type { HoldfastConfig } from '../../proxy/store/config'
import { startServer, type RunningServer } from '../../proxy/serve'
import { createLogger, type Logger, silentLogger } from '../../proxy/log'
import type { AnyPlugin } from '../../plugins/instance'
import { startFakeUpstream, type FakeUpstream } from './fake-upstream'

export const ROOT = path.join(__dirname, '..', '..')
export const REGISTER = path.join(ROOT, 'scripts', 'register.js')
export const CLI = path.join(ROOT, 'cli', 'run.ts')

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

/** Write `config` as `<home>/holdfast.yaml` (JSON is YAML). */
export function writeConfig(home: string, config: HoldfastConfig): void {
  fs.writeFileSync(path.join(home, 'holdfast.yaml'), JSON.stringify(config, null, 2))
}

export interface Proxy {
  home: string
  fake: FakeUpstream
  server: RunningServer
  url: string
  /** The bare repository of a workspace. */
  repo(ws?: string): string
  /** Settles when every request in flight has finished and every queued commit has landed. */
  settled(): Promise<void>
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
  const p: Proxy = {
    home,
    fake,
    server,
    url: server.url,
    repo: (ws = 'default') => path.join(home, 'workspaces', ws, 'repo.git'),
    settled: () => server.ctx.drain(),
    stop: () => server.close(),
    restart: async () => {
      await server.close()
      server = await startServer({ home, log: opts.log ?? testLog(), port: 0, plugins: opts.plugins })
      p.server = server
      p.url = server.url
    },
    close: async () => {
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
  return {
    child,
    url: m[1] as string,
    stderr: () => err,
    kill: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
      return exited
    },
  }
}
