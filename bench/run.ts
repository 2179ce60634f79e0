/**
 * `npm run bench`: the built proxy against direct calls to the fake upstream and against a bare
 * forwarder (the floor any forwarding proxy pays on this machine), side by side in one run. Prints
 * markdown: added latency (p50/p99), SSE time to first byte, throughput, CPU per request (all
 * threads and reaped children, commits included), the ratios the performance targets are stated
 * in, step cost at step 1 vs step 500, the long conversation (bench/long.ts), commit lag under load, and RSS idle, after a full run and
 * after a second one (at once, and after 10 s idle). Every case runs once unmeasured first (warm-up),
 * then in four rounds in which direct, bare and holdfast take turns. Nothing here is asserted: the numbers go to docs/benchmarks.md with the
 * command that made them. `-- --quick` runs a quarter of the requests; `HOLDFAST_BENCH_ROOT=<dir>`
 * benchmarks the holdfast built in another checkout (its `dist/`) beside the same fake and floor.
 */
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { longConversation } from './long'
import { websocketCase, websocketRows } from './websocket'
import {
  type Proc,
  cpuMs,
  filler,
  health,
  landed,
  pct,
  rssMb,
  startBare,
  startFake,
  startHoldfast,
} from './procs'

const QUICK = process.argv.includes('--quick')
const scale = QUICK ? 0.25 : 1

async function stop(p: Proc): Promise<void> {
  if (p.child.exitCode !== null) return
  const exited = new Promise((r) => p.child.once('exit', r))
  p.child.kill('SIGTERM')
  await exited
}

const load1 = (): string => os.loadavg()[0]?.toFixed(2) ?? '?'
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 })

interface Timing {
  total: number
  ttfb: number
}

function post(url: string, body: Buffer, retried = false): Promise<Timing> {
  return new Promise<Timing>((resolve, reject) => {
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
          authorization: 'Bearer bench',
        },
      },
      (res) => {
        res.once('data', () => (ttfb = performance.now() - t0))
        res.on('data', () => undefined)
        res.on('end', () => resolve({ total: performance.now() - t0, ttfb }))
        res.on('error', reject)
      },
    )
    req.on('error', (err: NodeJS.ErrnoException) => {
      // A kept-alive socket the server closed as this request went out: the request never
      // reached it (Node's documented retry case; a 1 MB body meets it as EPIPE); once, then the
      // error names the URL.
      const closed = err.code === 'ECONNRESET' || err.code === 'EPIPE'
      if (req.reusedSocket && closed && !retried) resolve(post(url, body, true))
      else reject(new Error(`POST ${url}: ${err.message}`, { cause: err }))
    })
    req.end(body)
  })
}

type Dialect = 'anthropic' | 'openai'
const PATHS: Record<Dialect, string> = { anthropic: '/v1/messages', openai: '/v1/chat/completions' }

function body(dialect: Dialect, bytes: number, stream: boolean, marker: string): Buffer {
  const text = filler(bytes)
  if (dialect === 'openai') {
    return Buffer.from(
      JSON.stringify({
        model: 'gpt-4o',
        stream,
        ...(stream ? { stream_options: { include_usage: true } } : {}),
        tools: [{ type: 'function', function: { name: 'Read', parameters: { type: 'object' } } }],
        messages: [
          { role: 'system', content: 'You are a benchmark.' },
          { role: 'user', content: `${marker} ${text}` },
        ],
      }),
    )
  }
  return Buffer.from(
    JSON.stringify({
      model: 'claude-sonnet-4-5',
      max_tokens: 64,
      stream,
      tools: [{ name: 'Read', description: 'read a file', input_schema: { type: 'object' } }],
      system: 'You are a benchmark.',
      messages: [{ role: 'user', content: `${marker} ${text}` }],
    }),
  )
}

interface Run {
  p50: number
  p99: number
  ttfb50: number
  rps: number
}

/** What one block of requests measured: each request's total and time to first byte, and the block's time. */
interface Samples {
  totals: number[]
  ttfbs: number[]
  secs: number
}

/** `n` requests at concurrency `c`; `urlFor(lane)` picks the URL (an agent per lane for the proxy). */
async function load(
  urlFor: (lane: number) => string,
  make: (i: number) => Buffer,
  n: number,
  c: number,
  from = 0,
): Promise<Samples> {
  const totals: number[] = []
  const ttfbs: number[] = []
  let next = 0
  const t0 = performance.now()
  await Promise.all(
    Array.from({ length: c }, async (_, lane) => {
      while (next < n) {
        const i = from + next++
        const t = await post(urlFor(lane), make(i))
        totals.push(t.total)
        ttfbs.push(t.ttfb)
      }
    }),
  )
  return { totals, ttfbs, secs: (performance.now() - t0) / 1000 }
}

/** Blocks of one target joined into its figures. */
function summary(blocks: readonly Samples[]): Run {
  const totals = blocks.flatMap((b) => b.totals)
  const ttfbs = blocks.flatMap((b) => b.ttfbs)
  const secs = blocks.reduce((a, b) => a + b.secs, 0)
  return { p50: pct(totals, 50), p99: pct(totals, 99), ttfb50: pct(ttfbs, 50), rps: totals.length / secs }
}

/**
 * How long a process is left idle before its settled RSS is read: V8 gives back heap it grew under
 * load only once allocation goes quiet (here ~6 s after the last request).
 */
const SETTLE_MS = 10_000

/** RSS after SETTLE_MS with no requests, MB. */
async function settledRss(pid: number): Promise<number> {
  await new Promise((r) => setTimeout(r, SETTLE_MS))
  return rssMb(pid)
}

/** Holdfast's RSS and each thread's heap now, for the progress lines (from its health endpoint). */
async function memoryNow(hf: Proc): Promise<string> {
  const { memory_mb: m } = await health<{
    memory_mb: {
      heapUsed: number
      heapTotal: number
      commit_worker: { heapUsed: number; heapTotal: number } | null
    }
  }>(hf)
  const worker = m.commit_worker ? `${m.commit_worker.heapUsed} of ${m.commit_worker.heapTotal}` : '-'
  return `RSS ${f(rssMb(hf.pid))} MB, heap MB used of total: server ${m.heapUsed} of ${m.heapTotal}, commit worker ${worker}`
}

const f = (x: number): string => (Number.isNaN(x) ? '-' : Math.abs(x) < 10 ? x.toFixed(2) : x.toFixed(1))
const kb = (n: number | undefined): string => String(Math.round((n ?? 0) / 1000))

interface Case {
  name: string
  dialect: Dialect
  bytes: number
  stream: boolean
  c: number
  n: number
}

const CASES: Case[] = (
  [
    { name: 'anthropic 10 KB JSON', dialect: 'anthropic', bytes: 10_000, stream: false, c: 1, n: 400 },
    { name: 'anthropic 10 KB SSE', dialect: 'anthropic', bytes: 10_000, stream: true, c: 1, n: 300 },
    { name: 'anthropic 10 KB JSON', dialect: 'anthropic', bytes: 10_000, stream: false, c: 32, n: 3000 },
    { name: 'openai 10 KB SSE', dialect: 'openai', bytes: 10_000, stream: true, c: 32, n: 2000 },
    { name: 'anthropic 1 MB JSON', dialect: 'anthropic', bytes: 1_000_000, stream: false, c: 1, n: 60 },
    { name: 'anthropic 1 MB JSON', dialect: 'anthropic', bytes: 1_000_000, stream: false, c: 32, n: 160 },
  ] as Case[]
).map((k) => ({ ...k, n: Math.max(20, Math.round(k.n * scale)) }))

interface Measured {
  k: Case
  d: Run
  b: Run
  h: Run
  bareCpu: number
  hfCpu: number
  lagMs: number
}

/**
 * Rounds a case is split into: direct, bare and holdfast take turns (each a quarter of the
 * requests, holdfast's commits landed before the next turn), so a slow spell of this shared VM
 * falls on all three rather than on whichever ran through it.
 */
const ROUNDS = 4

async function measure(k: Case, fake: Proc, bare: Proc, hf: Proc, tag: string): Promise<Measured> {
  const p = PATHS[k.dialect]
  const make = (i: number): Buffer => body(k.dialect, k.bytes, k.stream, `${tag}-${i}`)
  const d: Samples[] = []
  const b: Samples[] = []
  const h: Samples[] = []
  let bareCpu = 0
  let hfCpu = 0
  let lagMs = 0
  const per = Math.ceil(k.n / ROUNDS)
  for (let from = 0; from < k.n; from += per) {
    const n = Math.min(per, k.n - from)
    d.push(await load(() => `${fake.url}${p}`, make, n, k.c, from))
    const bc0 = cpuMs(bare.pid)
    b.push(await load(() => `${bare.url}${p}`, make, n, k.c, from))
    bareCpu += cpuMs(bare.pid) - bc0
    const hc0 = cpuMs(hf.pid)
    h.push(await load((lane) => `${hf.url}/w/bench/a/${tag}-${lane}${p}`, make, n, k.c, from))
    // Each turn's commits land before the next turn, and count as this case's CPU.
    lagMs = Math.max(lagMs, await landed(hf, 5))
    hfCpu += cpuMs(hf.pid) - hc0
  }
  return { k, d: summary(d), b: summary(b), h: summary(h), bareCpu: bareCpu / k.n, hfCpu: hfCpu / k.n, lagMs }
}

/**
 * Role resolution per step at step 1 and at step 500 of one agent, in-process: warm (config refs
 * unchanged: read the refs, hit the cache) and right after a config ref moved (recompute).
 */
async function roleResolution(): Promise<string[]> {
  const { Workspace } = await import('../proxy/store/workspace')
  const { ConfigReader } = await import('../proxy/store/config/lineage')
  const { setRole } = await import('../proxy/store/config/edit')
  const { readRef } = await import('../proxy/store/git')
  const { agentRef } = await import('../proxy/core/layout')
  const { commitSteps } = await import('../proxy/record/commit/step-commits')
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-bench-roles-'))
  const ws = new Workspace(home, 'bench')
  await ws.ensure()
  const rows = { anthropic: { dialect: 'anthropic' as const, base_url: 'http://127.0.0.1:9' } }
  await setRole(ws.repo, 'default', 'reviewer', { provider: 'anthropic', model: 'm1' }, rows)
  const reader = new ConfigReader(ws.repo)
  const tip = async (): Promise<string | undefined> => readRef(ws.repo, agentRef('a'))
  const timed = async (): Promise<{ warm: number; moved: number }> => {
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
  await commitSteps(ws.repo, [step(1)])
  const at1 = await timed()
  for (let n = 2; n <= 500; n += 50) {
    const batch = []
    for (let k = n; k < n + 50 && k <= 500; k++) batch.push(step(k))
    await commitSteps(ws.repo, batch)
  }
  const at500 = await timed()
  fs.rmSync(home, { recursive: true, force: true })
  return [
    '| role resolution per step | warm (config refs unchanged) ms | right after a config ref moved ms |',
    '|---|---|---|',
    `| step 1 | ${at1.warm.toFixed(3)} | ${at1.moved.toFixed(2)} |`,
    `| step 500 | ${at500.warm.toFixed(3)} | ${at500.moved.toFixed(2)} |`,
  ]
}

/** One agent, `steps` sequential steps: the added latency of each, against direct at the same size. */
async function conversation(
  fake: Proc,
  hf: Proc,
  name: string,
  steps: number,
  grow: boolean,
): Promise<{ added: number[]; sizes: number[] }> {
  const added: number[] = []
  const sizes: number[] = []
  let messages: unknown[] = []
  for (let i = 1; i <= steps; i++) {
    // Growing: each request = the previous + ~4 KB. Constant: a fresh 10 KB turn each time.
    messages = grow
      ? [
          ...messages,
          { role: 'user', content: `turn ${i} ${'x'.repeat(2000)}` },
          { role: 'assistant', content: 'ok' },
        ]
      : [
          { role: 'user', content: `turn ${i} ${'x'.repeat(10_000)}` },
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
    const d = await post(`${fake.url}/v1/messages`, b)
    const p = await post(`${hf.url}/w/bench/a/${name}/v1/messages`, b)
    added.push(p.total - d.total)
  }
  return { added, sizes }
}

async function main(): Promise<void> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-bench-'))
  const fake = await startFake()
  const config = {
    listen: { host: '127.0.0.1', port: 0 },
    defaults: { workspace: 'bench', agent: 'main' },
    providers: {
      anthropic: { dialect: 'anthropic', base_url: fake.url },
      openai: { dialect: 'openai', base_url: `${fake.url}/v1` },
    },
  }
  const hf = await startHoldfast(home, config)
  const bare = await startBare(fake.url)
  await new Promise((r) => setTimeout(r, 500))
  const idleStart = rssMb(hf.pid)
  // Warm both paths (JIT, connections, the workspace, the commit worker). The first request to each
  // is timed: holdfast's first step also loads its HTTP client, creates the workspace and starts
  // the commit worker.
  const first: number[] = []
  for (let i = 0; i < 30; i++) {
    for (const u of [fake.url, bare.url, `${hf.url}/w/bench/a/warm`]) {
      const t = await post(`${u}/v1/messages`, body('anthropic', 10_000, false, `w${i}`))
      if (i === 0) first.push(t.total)
    }
  }
  // Then every case once at a quarter of its requests through the floor and holdfast: V8 compiles
  // the hot code of each path (undici, SSE, the commit worker) in its first few thousand requests,
  // ≈ 1.5 s of CPU on its helper threads that a cold case would bill to its own requests.
  for (const k of CASES) {
    const make = (i: number): Buffer => body(k.dialect, k.bytes, k.stream, `warm-${i}`)
    const n = Math.max(20, Math.round(k.n / 4))
    await load(() => `${bare.url}${PATHS[k.dialect]}`, make, n, k.c)
    await load((lane) => `${hf.url}/w/bench/a/warm-${k.dialect}-${lane}${PATHS[k.dialect]}`, make, n, k.c)
  }
  await landed(hf, 5)
  process.stderr.write(`done: warm-up (load ${load1()})\n`)
  const idleWarm = await settledRss(hf.pid)
  const loadBefore = load1()

  const results: Measured[] = []
  for (const k of CASES) {
    results.push(await measure(k, fake, bare, hf, `${k.dialect}-${k.bytes}-${k.stream ? 's' : 'j'}-${k.c}`))
    process.stderr.write(`done: ${k.name} c=${k.c} (load ${load1()}; ${await memoryNow(hf)})\n`)
  }
  const rssAfterFirst = rssMb(hf.pid)
  const rssFirstSettled = await settledRss(hf.pid)

  // Step cost as the agent's history grows: constant 10 KB requests over 500 steps (the count
  // grows, nothing else), and a conversation whose request grows by ~4 KB a step.
  const steps = QUICK ? 150 : 500
  const constant = await conversation(fake, hf, 'long-constant', steps, false)
  const growing = await conversation(fake, hf, 'long-growing', steps, true)
  await landed(hf, 5)
  process.stderr.write(`done: ${steps}-step conversations\n`)

  // A second full run of the cases (new agents): RSS must stay flat.
  for (const k of CASES) await measure(k, fake, bare, hf, `again-${k.dialect}-${k.bytes}-${k.stream}-${k.c}`)
  const rssAfterSecond = rssMb(hf.pid)
  const peak = rssMb(hf.pid, 'VmHWM')
  const rssSecondSettled = await settledRss(hf.pid)
  const heaps = await health<{
    memory_mb: Record<string, number> & { commit_worker: Record<string, number> | null }
    previous_cache?: { bytes: number }
  }>(hf)
  process.stderr.write('done: second run\n')

  // journal.fsync: a second holdfast on its own home, beside the first.
  const syncHome = fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-bench-fsync-'))
  const synced = await startHoldfast(syncHome, { ...config, journal: { fsync: true } })
  for (let i = 0; i < 30; i++)
    await post(`${synced.url}/w/bench/a/warm/v1/messages`, body('anthropic', 10_000, false, `w${i}`))
  const fsyncRows: string[] = []
  for (const stream of [false, true]) {
    const tag = `fsync-${stream ? 's' : 'j'}`
    const make = (i: number): Buffer => body('anthropic', 10_000, stream, `${tag}-${i}`)
    const n = Math.round(300 * scale)
    const d = summary([await load(() => `${fake.url}/v1/messages`, make, n, 1)])
    const plain = summary([
      await load((lane) => `${hf.url}/w/bench/a/${tag}-plain-${lane}/v1/messages`, make, n, 1),
    ])
    const s = summary([
      await load((lane) => `${synced.url}/w/bench/a/${tag}-${lane}/v1/messages`, make, n, 1),
    ])
    fsyncRows.push(
      `| 10 KB ${stream ? 'SSE' : 'JSON'} | 1 | ${f(plain.p50 - d.p50)} / **${f(s.p50 - d.p50)}** | ${f(plain.p99 - d.p99)} / ${f(s.p99 - d.p99)} |${stream ? ` ${f(plain.ttfb50 - d.ttfb50)} / ${f(s.ttfb50 - d.ttfb50)} |` : ' - |'}`,
    )
  }
  await stop(synced)
  fs.rmSync(syncHome, { recursive: true, force: true })
  const repoMb =
    Number(
      fs
        .readdirSync(path.join(home, 'workspaces', 'bench', 'repo.git', 'objects', 'pack'))
        .reduce(
          (n, f2) =>
            n + fs.statSync(path.join(home, 'workspaces', 'bench', 'repo.git', 'objects', 'pack', f2)).size,
          0,
        ),
    ) / 1e6
  // The long conversation (issue 33): its own workspaces in the same serve, after the cases.
  const long = await longConversation(fake, bare, hf, home, QUICK ? 40 : 150, QUICK ? 2 : 8)
  process.stderr.write('done: long conversation\n')
  await stop(hf)
  await stop(bare)
  await stop(fake)
  const roles = await roleResolution()
  // Codex's Responses WebSocket (bench/websocket.ts): its own fake and serve, after the rest.
  const socket = websocketRows(await websocketCase(QUICK ? 1 : 4))
  process.stderr.write('done: websocket\n')

  const rows = results.map(
    ({ k, d, b, h, bareCpu, hfCpu }) =>
      `| ${k.name} | ${k.c} | ${f(d.p50)} / ${f(b.p50)} / ${f(h.p50)} | ${f(b.p50 - d.p50)} / **${f(h.p50 - d.p50)}** | ${f(d.p99)} / ${f(b.p99)} / ${f(h.p99)} | ${
        k.stream ? `${f(d.ttfb50)} / ${f(b.ttfb50)} / ${f(h.ttfb50)}` : '-'
      } | ${f(d.rps)} / ${f(b.rps)} / ${f(h.rps)} | ${f(bareCpu)} / ${f(hfCpu)} |`,
  )
  const ratio = results.map(({ k, d, b, h, bareCpu, hfCpu, lagMs }) => {
    const over = h.p50 - d.p50 - (b.p50 - d.p50)
    const ttfbOver = k.stream ? f(h.ttfb50 - b.ttfb50) : '-'
    return `| ${k.name} | ${k.c} | ${f(over)} | ${ttfbOver} | ${(h.rps / b.rps).toFixed(2)}× | ${(hfCpu / bareCpu).toFixed(2)}× | ${f(lagMs)} |`
  })
  const win = (xs: number[], from: number, to: number): number[] => xs.slice(from, to)
  const last = steps - 50
  const row = (label: string, c: { added: number[]; sizes: number[] }): string => {
    const early = pct(win(c.added, 0, 50), 50)
    const late = pct(win(c.added, last, steps), 50)
    return `| ${label} | ${kb(c.sizes[0])}–${kb(c.sizes[49])} KB: ${f(early)} | ${kb(c.sizes[last])}–${kb(c.sizes[steps - 1])} KB: ${f(late)} | ${(late / early).toFixed(2)}× |`
  }
  const out = [
    `Node ${process.version}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'}), ${new Date().toISOString().slice(0, 16)}Z${QUICK ? ', --quick' : ''}; load average ${loadBefore} at the start, ${load1()} at the end.`,
    '',
    'Columns: direct to the fake upstream / through a bare undici forwarder (no parse, no record, no commit) / through holdfast (each request a recorded step, one agent per client lane, committed to git).',
    '',
    '| case | c | p50 ms | added p50 ms (bare / holdfast) | p99 ms | SSE time to first byte ms | req/s | CPU ms per request, bare / holdfast (all threads, commits, git) |',
    '|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
    'Against the bare forwarder, same run (the targets: ≤ +0.5 ms at 10 KB c=1, ≥ 0.6× throughput and ≤ 2× CPU at 10 KB c=32, ≤ +6 ms at 1 MB c=1):',
    '',
    '| case | c | added p50 over bare, ms | added time to first byte over bare, ms | throughput holdfast / bare | CPU holdfast / bare | every step committed, ms after the last answer |',
    '|---|---|---|---|---|---|---|',
    ...ratio,
    '',
    `| step cost as an agent's history grows (${steps} sequential steps, one agent) | added ms p50, steps 1–50 | added ms p50, steps ${last + 1}–${steps} | late / early |`,
    '|---|---|---|---|',
    row('constant ~10 KB requests', constant),
    row('a conversation growing ~4 KB a step', growing),
    '',
    `Memory (RSS): ${f(idleStart)} MB idle after start, ${f(idleWarm)} MB idle after warm-up; after the cases ${f(rssAfterFirst)} MB at once and ${f(rssFirstSettled)} MB after ${SETTLE_MS / 1000} s idle; after a second run of them ${f(rssAfterSecond)} MB at once and ${f(rssSecondSettled)} MB after ${SETTLE_MS / 1000} s idle; peak ${f(peak)} MB. Packs of the workspace at the end: ${f(repoMb)} MB.`,
    '',
    `The first 10 KB request after start, ms: direct ${f(first[0] ?? NaN)}, bare ${f(first[1] ?? NaN)}, holdfast ${f(first[2] ?? NaN)} (its first step also loads its HTTP client, creates the workspace and starts the commit worker).`,
    '',
    `Where it is after the second run (MB): server thread heap ${f(heaps.memory_mb.heapUsed ?? NaN)} used of ${f(heaps.memory_mb.heapTotal ?? NaN)}, external ${f(heaps.memory_mb.external ?? NaN)}; commit worker heap ${f(heaps.memory_mb.commit_worker?.heapUsed ?? NaN)} used of ${f(heaps.memory_mb.commit_worker?.heapTotal ?? NaN)}, external ${f(heaps.memory_mb.commit_worker?.external ?? NaN)}; previous-request cache ${f((heaps.previous_cache?.bytes ?? 0) / 1048576)}.`,
    '',
    'journal.fsync (the request record flushed before the send, the answer before its end reaches the client):',
    '',
    '| case | c | added p50 ms (holdfast / with fsync) | added p99 ms | added time to first byte ms |',
    '|---|---|---|---|---|',
    ...fsyncRows,
    '',
    ...long,
    '',
    socket,
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
