/**
 * `npm run bench`: the built proxy against direct calls to the fake upstream, side by side in one
 * run. Prints markdown tables: added latency (p50/p99) for 10 KB and 1 MB bodies at c=1 and c=32,
 * SSE time to first byte, proxy CPU per request, peak RSS, step cost at step 1 vs 500, commit lag.
 * Nothing here is asserted: the numbers go to docs/benchmarks.md with the command that made them.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import readline from 'node:readline'
import { performance } from 'node:perf_hooks'

const ROOT = path.join(__dirname, '..')
const REGISTER = path.join(ROOT, 'scripts', 'register.js')
const QUICK = process.argv.includes('--quick')

interface Proc {
  child: ChildProcess
  url: string
}

async function start(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Proc> {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const line = await new Promise<string>((resolve, reject) => {
    readline.createInterface({ input: child.stdout as NodeJS.ReadableStream }).once('line', resolve)
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}`)))
  })
  const url = /(http:\/\/\S+)/.exec(line)?.[1]
  if (!url) throw new Error(`no url in: ${line}`)
  return { child, url }
}

/** utime+stime of a process in ms, from /proc (Linux). */
function cpuMs(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  const tick = 100 // USER_HZ on Linux
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / tick
}

/** Reset the process's peak RSS (Linux: write 5 to clear_refs), so each case reports its own. */
function resetPeak(pid: number): void {
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5')
  } catch {
    // Not permitted here: the peak then covers every case so far.
  }
}

function rssMb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0)
  return kb / 1024
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 })

interface Timing {
  total: number
  ttfb: number
}

function post(url: string, body: Buffer, headers: Record<string, string> = {}): Promise<Timing> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now()
    let ttfb = 0
    const req = http.request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': body.length,
          'anthropic-version': '2023-06-01',
          ...headers,
        },
      },
      (res) => {
        res.once('data', () => (ttfb = performance.now() - t0))
        res.on('data', () => undefined)
        res.on('end', () => resolve({ total: performance.now() - t0, ttfb }))
        res.on('error', reject)
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

function body(bytes: number, stream: boolean, marker: string): Buffer {
  const filler = 'lorem ipsum dolor sit amet '.repeat(Math.ceil(bytes / 27)).slice(0, bytes)
  return Buffer.from(
    JSON.stringify({
      model: 'claude-sonnet-4-5',
      max_tokens: 64,
      stream,
      tools: [{ name: 'Read', description: 'read a file', input_schema: { type: 'object' } }],
      system: 'You are a benchmark.',
      messages: [{ role: 'user', content: `${marker} ${filler}` }],
    }),
  )
}

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN
}

interface Run {
  p50: number
  p99: number
  ttfb50: number
  rps: number
}

/** `n` requests at concurrency `c`; `urlFor(i)` picks the URL (an agent per lane for the proxy). */
async function load(
  urlFor: (lane: number) => string,
  make: (i: number) => Buffer,
  n: number,
  c: number,
): Promise<Run> {
  const totals: number[] = []
  const ttfbs: number[] = []
  let next = 0
  const t0 = performance.now()
  await Promise.all(
    Array.from({ length: c }, async (_, lane) => {
      while (next < n) {
        const i = next++
        const t = await post(urlFor(lane), make(i))
        totals.push(t.total)
        ttfbs.push(t.ttfb)
      }
    }),
  )
  const secs = (performance.now() - t0) / 1000
  return { p50: pct(totals, 50), p99: pct(totals, 99), ttfb50: pct(ttfbs, 50), rps: n / secs }
}

const kb = (n: number | undefined): string => String(Math.round((n ?? 0) / 1000))
const f = (x: number): string => (Number.isNaN(x) ? '-' : x < 10 ? x.toFixed(2) : x.toFixed(1))

/**
 * Role resolution per step at step 1 and at step 500 of one agent, in-process: warm (config refs
 * unchanged: read the refs, hit the cache) and right after a config ref moved (recompute).
 */
async function roleResolution(): Promise<string[]> {
  const { Workspace } = await import('../proxy/store/workspace')
  const { ConfigReader } = await import('../proxy/store/config-lineage')
  const { setRole } = await import('../proxy/store/config-edit')
  const { readRef } = await import('../proxy/store/git-refs')
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-bench-roles-'))
  const ws = new Workspace(home, 'bench')
  await ws.ensure()
  const rows = { anthropic: { dialect: 'anthropic' as const, base_url: 'http://127.0.0.1:9' } }
  await setRole(ws.repo, 'default', 'reviewer', { provider: 'anthropic', model: 'm1' }, rows)
  const reader = new ConfigReader(ws.repo)
  const tip = async (): Promise<string | undefined> => readRef(ws.repo, 'refs/heads/agents/a')
  const measure = async (): Promise<{ warm: number; moved: number }> => {
    const warm: number[] = []
    for (let i = 0; i < 200; i++) {
      const t = performance.now()
      await reader.resolve('agent:a', tip)
      warm.push(performance.now() - t)
    }
    await setRole(ws.repo, 'default', 'reviewer', { provider: 'anthropic', model: `m${Date.now()}` }, rows)
    const t = performance.now()
    await reader.resolve('agent:a', tip)
    return { warm: pct(warm, 50), moved: performance.now() - t }
  }
  const step = (n: number) => ({
    agent: 'a',
    n,
    model: 'm',
    files: {
      'meta.json': Buffer.from('{}'),
      'request.json': Buffer.from(JSON.stringify({ n, pad: 'x'.repeat(4000) })),
    },
  })
  await ws.commitSteps([step(1)])
  const at1 = await measure()
  for (let n = 2; n <= 500; n += 50) {
    const batch = []
    for (let k = n; k < n + 50 && k <= 500; k++) batch.push(step(k))
    await ws.commitSteps(batch)
  }
  const at500 = await measure()
  fs.rmSync(home, { recursive: true, force: true })
  return [
    '| role resolution per step | warm (config refs unchanged) ms | right after a config ref moved ms |',
    '|---|---|---|',
    `| step 1 | ${at1.warm.toFixed(3)} | ${at1.moved.toFixed(2)} |`,
    `| step 500 | ${at500.warm.toFixed(3)} | ${at500.moved.toFixed(2)} |`,
  ]
}

async function main(): Promise<void> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-bench-'))
  const fake = await start([
    '-r',
    REGISTER,
    'test/support/fake-upstream-main.ts',
    '--port',
    '0',
    '--no-cache-model',
  ])
  fs.writeFileSync(
    path.join(home, 'holdfast.yaml'),
    JSON.stringify({
      listen: { host: '127.0.0.1', port: 0 },
      defaults: { workspace: 'bench', agent: 'main' },
      providers: {
        anthropic: { dialect: 'anthropic', base_url: fake.url },
        openai: { dialect: 'openai', base_url: `${fake.url}/v1` },
      },
      maintenance: { gc_every_steps: 0 },
    }),
  )
  const proxy = await start(
    [path.join(ROOT, 'dist', 'cli', 'run.js'), 'serve', '--home', home, '--port', '0'],
    {
      HOLDFAST_LOG_LEVEL: 'warn',
    },
  )
  const pid = proxy.child.pid as number
  const bare = await start(['-r', REGISTER, 'bench/bare-forwarder.ts', fake.url])
  const direct = (): string => `${fake.url}/v1/messages`
  const viaBare = (): string => `${bare.url}/v1/messages`
  const via = (lane: number, tag: string): string => `${proxy.url}/w/bench/a/${tag}-${lane}/v1/messages`
  const rows: string[] = []
  const scale = QUICK ? 0.25 : 1
  const cases: { name: string; bytes: number; stream: boolean; c: number; n: number }[] = [
    { name: '10 KB JSON', bytes: 10_000, stream: false, c: 1, n: Math.round(400 * scale) },
    { name: '10 KB SSE', bytes: 10_000, stream: true, c: 1, n: Math.round(300 * scale) },
    { name: '10 KB JSON', bytes: 10_000, stream: false, c: 32, n: Math.round(3000 * scale) },
    { name: '1 MB JSON', bytes: 1_000_000, stream: false, c: 1, n: Math.round(60 * scale) },
    { name: '1 MB JSON', bytes: 1_000_000, stream: false, c: 32, n: Math.round(160 * scale) },
  ]
  // Warm both paths (JIT, connections, workspace creation).
  for (let i = 0; i < 30; i++) {
    await post(direct(), body(10_000, false, `w${i}`))
    await post(via(0, 'warm'), body(10_000, false, `w${i}`))
  }
  for (const k of cases) {
    const tag = `${k.bytes}-${k.stream ? 's' : 'j'}-${k.c}`
    const make = (i: number): Buffer => body(k.bytes, k.stream, `${tag}-${i}`)
    const d = await load(direct, make, k.n, k.c)
    const b = await load(viaBare, make, k.n, k.c)
    const cpu0 = cpuMs(pid)
    resetPeak(pid)
    const p = await load((lane) => via(lane, tag), make, k.n, k.c)
    const cpu = (cpuMs(pid) - cpu0) / k.n
    const peakMb = rssMb(pid, 'VmHWM')
    rows.push(
      `| ${k.name} | ${k.c} | ${f(d.p50)} / ${f(b.p50)} / ${f(p.p50)} | ${f(b.p50 - d.p50)} / **${f(p.p50 - d.p50)}** | ${f(d.p99)} / ${f(b.p99)} / ${f(p.p99)} | ${
        k.stream ? `${f(d.ttfb50)} / ${f(b.ttfb50)} / ${f(p.ttfb50)}` : '-'
      } | ${f(d.rps)} / ${f(b.rps)} / ${f(p.rps)} | ${f(cpu)} | ${Math.round(peakMb)} |`,
    )
    process.stderr.write(`done: ${k.name} c=${k.c}\n`)
  }
  // The cost of journal.fsync: a second holdfast on its own home with fsync on, beside the first.
  const syncHome = fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-bench-fsync-'))
  const yaml = JSON.parse(fs.readFileSync(path.join(home, 'holdfast.yaml'), 'utf8')) as Record<
    string,
    unknown
  >
  fs.writeFileSync(
    path.join(syncHome, 'holdfast.yaml'),
    JSON.stringify({ ...yaml, journal: { fsync: true } }),
  )
  const synced = await start(
    [path.join(ROOT, 'dist', 'cli', 'run.js'), 'serve', '--home', syncHome, '--port', '0'],
    {
      HOLDFAST_LOG_LEVEL: 'warn',
    },
  )
  const viaSynced = (lane: number, tag: string): string =>
    `${synced.url}/w/bench/a/${tag}-${lane}/v1/messages`
  for (let i = 0; i < 30; i++) await post(viaSynced(0, 'warm'), body(10_000, false, `w${i}`))
  const fsyncRows: string[] = []
  for (const stream of [false, true]) {
    const tag = `fsync-${stream ? 's' : 'j'}`
    const make = (i: number): Buffer => body(10_000, stream, `${tag}-${i}`)
    const n = Math.round(300 * scale)
    const d = await load(direct, make, n, 1)
    const plain = await load((lane) => via(lane, `${tag}-plain`), make, n, 1)
    const s = await load((lane) => viaSynced(lane, tag), make, n, 1)
    fsyncRows.push(
      `| 10 KB ${stream ? 'SSE' : 'JSON'} | 1 | ${f(plain.p50 - d.p50)} / **${f(s.p50 - d.p50)}** | ${f(plain.p99 - d.p99)} / ${f(s.p99 - d.p99)} |${stream ? ` ${f(plain.ttfb50 - d.ttfb50)} / ${f(s.ttfb50 - d.ttfb50)} |` : ' - |'}`,
    )
  }
  synced.child.kill('SIGTERM')
  await new Promise((r) => synced.child.once('exit', r))
  fs.rmSync(syncHome, { recursive: true, force: true })
  process.stderr.write('done: fsync\n')
  // Step cost as history grows: one agent, 500 sequential steps of a growing conversation.
  resetPeak(pid)
  const steps = QUICK ? 150 : 500
  const grow: number[] = []
  const sizes: number[] = []
  let messages: unknown[] = []
  for (let i = 1; i <= steps; i++) {
    messages = [
      ...messages,
      { role: 'user', content: `turn ${i} ${'x'.repeat(2000)}` },
      { role: 'assistant', content: 'ok' },
    ]
    const b = Buffer.from(
      JSON.stringify({
        model: 'claude-sonnet-4-5',
        max_tokens: 8,
        messages: [...messages, { role: 'user', content: 'go' }],
      }),
    )
    sizes.push(b.length)
    const d = await post(direct(), b)
    const p = await post(`${proxy.url}/w/bench/a/long/v1/messages`, b)
    grow.push(p.total - d.total)
  }
  const early = grow.slice(0, 50)
  const late = grow.slice(-50)
  // Commit lag: how long after the last answer until every step is committed.
  const t0 = performance.now()
  for (;;) {
    const health = await new Promise<{ agents: { next_step: number; committed: number }[] }>(
      (resolve, reject) => {
        http.get(`${proxy.url}/_holdfast/health`, { agent }, (res) => {
          let s = ''
          res.on('data', (c: Buffer) => (s += c.toString()))
          res.on('end', () => resolve(JSON.parse(s)))
          res.on('error', reject)
        })
      },
    )
    if (health.agents.every((a) => a.committed === a.next_step - 1)) break
    await new Promise((r) => setTimeout(r, 10))
  }
  const drainMs = performance.now() - t0
  const peak = rssMb(pid, 'VmHWM')
  proxy.child.kill('SIGTERM')
  bare.child.kill('SIGTERM')
  fake.child.kill('SIGTERM')
  await new Promise((r) => proxy.child.once('exit', r))
  const roles = await roleResolution()
  const out = [
    `Node ${process.version}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'}), ${new Date().toISOString().slice(0, 10)}${QUICK ? ', --quick' : ''}`,
    '',
    'Columns: direct to the fake upstream / through a bare undici forwarder (no parse, no record, no commit) / through holdfast.',
    '',
    '| case | c | p50 ms | added p50 ms (bare / holdfast) | p99 ms | SSE time to first byte ms | req/s | holdfast CPU ms/req (all threads) | holdfast peak RSS MB |',
    '|---|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
    `| step cost as history grows | added ms p50 | added ms p99 |`,
    `|---|---|---|`,
    `| steps 1–50 (requests ${kb(sizes[0])}–${kb(sizes[49])} KB) | ${f(pct(early, 50))} | ${f(pct(early, 99))} |`,
    `| steps ${steps - 49}–${steps} (requests ${kb(sizes[steps - 50])}–${kb(sizes[steps - 1])} KB) | ${f(pct(late, 50))} | ${f(pct(late, 99))} |`,
    '',
    `Peak RSS over the growing conversation: ${f(peak)} MB. All steps committed ${f(drainMs)} ms after the last answer.`,
    '',
    'journal.fsync (the request record flushed before the send, the answer before its end reaches the client):',
    '',
    '| case | c | added p50 ms (holdfast / with fsync) | added p99 ms | added time to first byte ms |',
    '|---|---|---|---|---|',
    ...fsyncRows,
    '',
    ...roles,
  ]
  process.stdout.write(out.join('\n') + '\n')
  fs.rmSync(home, { recursive: true, force: true })
  agent.destroy()
}

const entry = process.argv.includes('--roles-only')
  ? async () => process.stdout.write((await roleResolution()).join('\n') + '\n')
  : main
entry().catch((err) => {
  console.error(err)
  process.exit(1)
})
