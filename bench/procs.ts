/**
 * The benches' processes: start a server (the fake upstream, the bare forwarder, holdfast) and read
 * the URL from its first line; read a process's memory and CPU; send a request and time it; the
 * filler text requests are made of and the percentile the figures are read with. Every process
 * started here is killed when the bench exits, however it exits, so a failed run never leaves
 * servers behind.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import readline from 'node:readline'

export const ROOT = path.join(__dirname, '..')
export const REGISTER = path.join(ROOT, 'scripts', 'register.js')

export interface Proc {
  child: ChildProcess
  url: string
  pid: number
  /** holdfast's token (`<home>/token`, made at its first start): its admin surface requires it. */
  token?: string
}

const started: ChildProcess[] = []
process.on('exit', () => {
  for (const c of started) c.kill('SIGKILL')
})

/**
 * `node <args>` from the package root; resolves once it printed a line with its URL. With
 * `HOLDFAST_BENCH_STDOUT=<file>`, what it prints after that line is appended there (node's
 * `--trace-gc` lines, given in `HOLDFAST_NODE_ARGS`).
 */
export async function start(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Proc> {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  started.push(child)
  // The first line naming a URL (node flags such as --trace-gc print lines of their own before it).
  const url = await new Promise<string>((resolve, reject) => {
    const lines = readline.createInterface({ input: child.stdout as NodeJS.ReadableStream })
    lines.on('line', (line) => {
      const found = /(http:\/\/\S+)/.exec(line)?.[1]
      if (found) {
        lines.removeAllListeners('line')
        const keep = process.env.HOLDFAST_BENCH_STDOUT
        if (keep) lines.on('line', (l) => fs.appendFileSync(keep, `${l}\n`))
        resolve(found)
      }
    })
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}`)))
  })
  return { child, url, pid: child.pid as number }
}

/** The fake upstream as every bench runs it: lite mode (no cache model). */
export const startFake = (): Promise<Proc> =>
  start(['-r', REGISTER, 'test/support/fake-upstream-main.ts', '--port', '0', '--no-cache-model'])

/** The bare undici forwarder in front of `upstream`: the floor any forwarding proxy pays here (`nodeArgs` go before it). */
export const startBare = (upstream: string, nodeArgs: string[] = []): Promise<Proc> =>
  start([...nodeArgs, '-r', REGISTER, 'bench/bare-forwarder.ts', upstream])

/**
 * `holdfast serve` on `home` with `config` as its holdfast.yaml, warn-level logs, from `dist/` (built
 * first) or, with `HOLDFAST_BENCH_ROOT=<dir>`, another checkout's build; `nodeArgs` go before it.
 * Its environment adds `env` (bench/malloc.ts sets glibc's malloc variables there).
 */
export function startHoldfast(
  home: string,
  config: object,
  nodeArgs: string[] = [],
  env: Record<string, string> = {},
): Promise<Proc> {
  // Mode 0600 as serve writes its own (it warns about a holdfast.yaml others may read).
  fs.writeFileSync(path.join(home, 'holdfast.yaml'), JSON.stringify(config), { mode: 0o600 })
  const dist = path.join(process.env.HOLDFAST_BENCH_ROOT ?? ROOT, 'dist', 'cli', 'entry.js')
  return start([...nodeArgs, dist, 'serve', '--home', home, '--port', '0'], {
    HOLDFAST_LOG_LEVEL: 'warn',
    ...env,
  }).then((p) => ({ ...p, token: tokenOf(home) }))
}

/** The home's token, when serve made one (a build from before the token was the default made none). */
function tokenOf(home: string): string | undefined {
  try {
    return fs.readFileSync(path.join(home, 'token'), 'utf8').trim()
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw err
  }
}

/** holdfast's `GET /_holdfast/health`, with its token. */
export async function health<T>(hf: Proc): Promise<T> {
  const res = await fetch(`${hf.url}/_holdfast/health`, {
    headers: hf.token ? { 'x-holdfast-token': hf.token } : {},
  })
  if (!res.ok) throw new Error(`health answered ${res.status}: ${await res.text()}`)
  return (await res.json()) as T
}

/**
 * Until holdfast has committed every step it numbered (its health), so a measure counts all of
 * them; resolves with how long that took, ms.
 */
export async function landed(hf: Proc, pollMs = 10): Promise<number> {
  const t0 = performance.now()
  for (;;) {
    const h = await health<{ agents: { next_step: number; committed: number }[] }>(hf)
    if (h.agents.every((a) => a.committed === a.next_step - 1)) return performance.now() - t0
    await new Promise((r) => setTimeout(r, pollMs))
  }
}

/** Where a served home's providers point: the fake upstream's two endpoints. */
export interface Upstreams {
  anthropicBaseUrl: string
  openaiBaseUrl: string
}

/** A fresh home served by the built `holdfast serve` (`startHoldfast`), as fuzz and the view's benches drive it. */
export interface Served extends Proc {
  home: string
  /** The home's token (`<home>/token`, written by serve): the view and the admin surface ask for it. */
  token: string
  /** The bare repository of workspace `ws`. */
  repo(ws?: string): string
  /** Resolves once every step holdfast has numbered is committed (health's counts). */
  settled(): Promise<void>
  /** Stop the serve (SIGTERM: its bounded close) and remove the home. */
  close(): Promise<void>
}

/**
 * `holdfast serve` on a new temporary home whose providers `anthropic` and `openai` are `up`'s
 * endpoints, with `config` (and its extra `providers`) over that; `env` as for `startHoldfast`.
 */
export async function serveHome(
  up: Upstreams,
  config: { providers?: object; [key: string]: unknown } = {},
  env: Record<string, string> = {},
): Promise<Served> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-bench-'))
  const proc = await startHoldfast(
    home,
    {
      defaults: { workspace: 'default', agent: 'main' },
      ...config,
      providers: {
        anthropic: { dialect: 'anthropic', base_url: up.anthropicBaseUrl },
        openai: { dialect: 'openai', base_url: up.openaiBaseUrl },
        ...config.providers,
      },
    },
    [],
    env,
  )
  const token = env.HOLDFAST_TOKEN ?? process.env.HOLDFAST_TOKEN ?? proc.token ?? ''
  const served = { ...proc, token }
  return {
    ...served,
    home,
    repo: (ws = 'default') => path.join(home, 'workspaces', ws, 'repo.git'),
    settled: async () => void (await landed(served, 20)),
    close: async () => {
      if (proc.child.exitCode === null && proc.child.signalCode === null) {
        const exited = new Promise((r) => proc.child.once('exit', r))
        proc.child.kill('SIGTERM')
        await exited
      }
      fs.rmSync(home, { recursive: true, force: true })
    },
  }
}

/** A process's resident memory now (VmRSS) or at its peak (VmHWM), MB. */
export function rssMb(pid: number, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024
}

/** CPU ms of a process so far: all its threads, live or gone, and the children it reaped (git). */
export function cpuMs(pid: number): number {
  const f = statFields(pid)
  return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * TICK_MS
}

/** USER_HZ = 100 on Linux: /proc's times are in 10 ms ticks. */
const TICK_MS = 10

/** The fields of `/proc/<pid>/stat` after the command name (state first, the parent's pid second). */
function statFields(pid: number | string): string[] {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')
}

/** CPU ms of `pid` (as cpuMs) and of its live descendants (a `git` it runs counts before it is reaped). */
export function treeCpuMs(pid: number): number {
  const parent = new Map<number, number>()
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      parent.set(Number(name), Number(statFields(name)[1]))
    } catch {
      // gone meanwhile
    }
  }
  const within = (p: number): boolean => {
    for (let q = parent.get(p); q !== undefined && q > 1; q = parent.get(q)) if (q === pid) return true
    return false
  }
  let total = cpuMs(pid)
  for (const p of parent.keys()) {
    if (p === pid || !within(p)) continue
    try {
      const f = statFields(p)
      total += (Number(f[11]) + Number(f[12])) * TICK_MS
    } catch {
      // gone meanwhile: its time is its parent's once reaped
    }
  }
  return total
}

/** The `p`th percentile of `xs` (nearest rank; NaN when empty). */
/** CPU ms and minor page faults of each thread of `pid`, by thread id, with its name. */
export function threads(pid: number): Map<string, { name: string; ms: number; faults: number }> {
  const out = new Map<string, { name: string; ms: number; faults: number }>()
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      const name = fs.readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim()
      out.set(tid, {
        name: tid === String(pid) ? 'server thread' : name === 'node' ? 'other threads' : name,
        ms: (Number(f[11]) + Number(f[12])) * TICK_MS,
        faults: Number(f[7]),
      })
    } catch {
      // the thread ended
    }
  }
  return out
}

export function pct(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN
}

/** `bytes` of lorem ipsum: the bulk of every bench request. */
export const filler = (bytes: number): string =>
  'lorem ipsum dolor sit amet '.repeat(Math.ceil(bytes / 27)).slice(0, bytes)

/** Request `i` of a bench: one user message of `i` and `text`, with `extra` top-level fields before it. */
export const requestBody = (i: number, text: string, extra: object = {}): Buffer =>
  Buffer.from(
    JSON.stringify({
      model: 'claude-sonnet-4-5',
      max_tokens: 16,
      ...extra,
      messages: [{ role: 'user', content: `${i} ${text}` }],
    }),
  )

/** POST a JSON body through `agent` and read the whole answer; resolves with the time to its last byte, ms (a status other than 200 rejects). */
export const postJson = (agent: http.Agent, url: string, body: Buffer | string): Promise<number> =>
  postTimed(agent, url, body).then((t) => t.total)

/** `postJson`, timing the first byte of the answer's body too (an event stream's first event), ms. */
export function postTimed(
  agent: http.Agent,
  url: string,
  body: Buffer | string,
): Promise<{ total: number; ttfb: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now()
    let ttfb = NaN
    const req = http.request(
      url,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      },
      (res) => {
        res.once('data', () => (ttfb = performance.now() - t0))
        res.resume()
        res.on('end', () =>
          res.statusCode === 200
            ? resolve({ total: performance.now() - t0, ttfb })
            : reject(new Error(`${url}: ${res.statusCode}`)),
        )
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}
