/**
 * Where a recorded step's cost goes: the built holdfast (`npm run build` first) and the bare
 * forwarder each take the same JSON requests (10 KB unless told) against the fake upstream; prints CPU per
 * request split by thread (the server thread, and the others: commit worker, libuv pool, V8
 * helpers, which Node 20 all names `node`; from /proc/<pid>/task), then by thread id, and, when
 * strace is installed, system calls per request by name (`strace -c -f` attached for the measured
 * requests only). Run: `node -r ./scripts/register.js bench/profile.ts [requests=500] [lanes=1] [bytes=10000]`
 * (`HOLDFAST_BENCH_ROOT=<dir>`: the holdfast built in another checkout; `HOLDFAST_NODE_ARGS="…"`:
 * node flags for holdfast; `HOLDFAST_BARE_NODE_ARGS`, for the bare forwarder; `HOLDFAST_PROFILE_CPU=<dir>`: a `--cpu-prof` profile per thread there, the bare
 * forwarder's too, which bench/cpuprofile.ts reads).
 * Measures; asserts nothing.
 */
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { filler, landed, postJson, requestBody, startBare, startFake, startHoldfast, threads } from './procs'

const N = Number(process.argv[2] ?? 500)
/** Client lanes sending at once; through holdfast each lane is its own agent, as in `npm run bench`. */
const C = Number(process.argv[3] ?? 1)

const agent = new http.Agent({ keepAlive: true, maxSockets: C })
const post = (url: string, body: Buffer): Promise<number> => postJson(agent, url, body)

const BYTES = Number(process.argv[4] ?? 10_000)
const text = filler(BYTES)
const body = (i: number): Buffer => requestBody(i, text, { system: 'You are a benchmark.' })

/** Requests `from`…`from + N - 1` over C lanes; lane k sends to `url(k)`. */
async function send(url: (lane: number) => string, from: number): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: C }, async (_, lane) => {
      while (next < N) await post(url(lane), body(from + next++))
    }),
  )
}

async function measure(
  label: string,
  pid: number,
  url: (lane: number) => string,
  settle: () => Promise<void> = async () => undefined,
): Promise<string[]> {
  // Warm with as many requests as are measured: V8 compiles the hot paths over the first few
  // thousand, on its helper threads, and that CPU is not what a step costs.
  await send(url, -2 * N)
  await settle()
  await new Promise((r) => setTimeout(r, 1000))
  // CPU first, untraced (strace slows every system call); then the same requests traced.
  // HOLDFAST_PROFILE_PERF=<dir>: `perf record -g` of these requests, one file per process there
  // (CPU time only, kernel included: a profiler sampling by wall time bills a thread's waits to the
  // system call it waited in). HOLDFAST_PROFILE_PERF_EVENT=page-faults samples every page fault
  // instead (where the fresh memory is touched).
  const perfDir = process.env.HOLDFAST_PROFILE_PERF
  const event = process.env.HOLDFAST_PROFILE_PERF_EVENT
  const sampling = event ? ['-e', event, '-c', '1'] : ['-F', '1999']
  const perf = perfDir
    ? spawn(
        'perf',
        ['record', ...sampling, '-g', '-p', String(pid), '-o', path.join(perfDir, `${label}.data`)],
        {
          stdio: 'ignore',
        },
      )
    : undefined
  if (perf) await new Promise((r) => setTimeout(r, 500))
  const before = threads(pid)
  await send(url, 0)
  await settle()
  await new Promise((r) => setTimeout(r, 500))
  const after = threads(pid)
  if (perf) {
    perf.kill('SIGINT')
    await new Promise((r) => perf.once('exit', r))
  }
  // Not beside --cpu-prof: a traced system call is many times slower and would fill the profile.
  const strace = !process.env.HOLDFAST_PROFILE_CPU && spawnSync('which', ['strace']).status === 0
  const traceFile = path.join(os.tmpdir(), `holdfast-profile-${process.pid}-${label}.txt`)
  const tracer = strace
    ? spawn('strace', ['-c', '-f', '-p', String(pid), '-o', traceFile], { stdio: 'ignore' })
    : undefined
  if (tracer) {
    await new Promise((r) => setTimeout(r, 500))
    await send(url, N)
    await settle()
    await new Promise((r) => setTimeout(r, 500))
    tracer.kill('SIGINT')
    await new Promise((r) => tracer.once('exit', r))
  }
  const byName = new Map<string, number>()
  const byThread: { tid: string; name: string; ms: number; faults: number }[] = []
  for (const [tid, t] of after) {
    const ms = t.ms - (before.get(tid)?.ms ?? 0)
    byName.set(t.name, (byName.get(t.name) ?? 0) + ms)
    byThread.push({ tid, name: t.name, ms, faults: t.faults - (before.get(tid)?.faults ?? 0) })
  }
  const faults = byThread.reduce((a, t) => a + t.faults, 0)
  const total = [...byName.values()].reduce((a, b) => a + b, 0)
  const lines = [
    `${label}: CPU ${(total / N).toFixed(2)} ms per request — ${[...byName]
      .filter(([, ms]) => ms / N >= 0.01)
      .sort((a, b) => b[1] - a[1])
      .map(([name, ms]) => `${name} ${(ms / N).toFixed(2)}`)
      .join(', ')}`,
    // Node 20 names every thread `node`: by id, the commit worker is the busy one started last,
    // V8's helpers the four started right after the server thread.
    `${label}: by thread id — ${byThread
      .filter((t) => t.ms / N >= 0.01)
      .map((t) => `${t.tid}${t.name === 'server thread' ? ' (server)' : ''} ${(t.ms / N).toFixed(2)}`)
      .join(', ')}`,
    // A first touch of memory the process had not used (or gave back) costs a page fault; on this
    // VM one costs microseconds, so a request that allocates fresh megabytes pays for it here.
    `${label}: ${(faults / N).toFixed(0)} minor page faults per request — ${byThread
      .filter((t) => t.faults / N >= 1)
      .map((t) => `${t.tid}${t.name === 'server thread' ? ' (server)' : ''} ${(t.faults / N).toFixed(0)}`)
      .join(', ')}`,
  ]
  if (tracer && fs.existsSync(traceFile)) {
    const rows = fs
      .readFileSync(traceFile, 'utf8')
      .split('\n')
      .map((l) => l.trim().split(/\s+/))
      .filter((c) => c.length >= 5 && /^\d/.test(c[0] ?? '') && c[c.length - 1] !== 'total')
      .map((c) => ({ name: c[c.length - 1] as string, calls: Number(c[3]) }))
      .sort((a, b) => b.calls - a.calls)
    const calls = rows.reduce((a, r) => a + r.calls, 0)
    lines.push(
      `${label}: ${(calls / N).toFixed(1)} system calls per request — ${rows
        .slice(0, 10)
        .map((r) => `${r.name} ${(r.calls / N).toFixed(1)}`)
        .join(', ')}`,
    )
    fs.rmSync(traceFile, { force: true })
  }
  return lines
}

async function main(): Promise<void> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-profile-'))
  const fake = await startFake()
  // HOLDFAST_PROFILE_CPU=<dir>: --cpu-prof profiles of holdfast (one per thread) and of the bare
  // forwarder, written there at the same sampling interval (HOLDFAST_PROFILE_CPU_US, default 100 µs).
  const cpuProf = process.env.HOLDFAST_PROFILE_CPU
  const profiled = cpuProf
    ? [
        '--cpu-prof',
        `--cpu-prof-dir=${cpuProf}`,
        `--cpu-prof-interval=${process.env.HOLDFAST_PROFILE_CPU_US ?? 100}`,
      ]
    : []
  // HOLDFAST_BARE_NODE_ARGS="…": node flags for the bare forwarder (--trace-gc-nvp beside holdfast's).
  const bare = await startBare(fake.url, [
    ...profiled,
    ...(process.env.HOLDFAST_BARE_NODE_ARGS?.split(' ').filter((a) => a !== '') ?? []),
  ])
  const hf = await startHoldfast(
    home,
    {
      listen: { host: '127.0.0.1', port: 0 },
      providers: { anthropic: { dialect: 'anthropic', base_url: fake.url } },
    },
    [...profiled, ...(process.env.HOLDFAST_NODE_ARGS?.split(' ').filter((a) => a !== '') ?? [])],
  )
  try {
    const out = [
      `${N} ${BYTES >= 1e6 ? `${BYTES / 1e6} MB` : `${BYTES / 1e3} KB`} JSON requests over ${C} lane${C === 1 ? '' : 's'}, ${new Date().toISOString().slice(0, 16)}Z, load ${os.loadavg()[0]?.toFixed(2)}`,
      ...(await measure('bare forwarder', bare.child.pid as number, () => `${bare.url}/v1/messages`)),
      ...(await measure(
        'holdfast',
        hf.child.pid as number,
        (lane) => `${hf.url}/w/profile/a/${C === 1 ? 'main' : `lane${lane}`}/v1/messages`,
        async () => void (await landed(hf, 20)),
      )),
    ]
    if (cpuProf)
      out.push(
        `profiles (bench/cpuprofile.ts ${2 * N} <file> reads one): bare forwarder CPU.*.${bare.pid}.*, holdfast CPU.*.${hf.pid}.* (its server thread …0.001, the commit worker the one after)`,
      )
    process.stdout.write(out.join('\n') + '\n')
  } finally {
    for (const p of [hf, bare, fake]) p.child.kill('SIGTERM')
    agent.destroy()
    // A profiled holdfast writes one profile per thread as it exits.
    await new Promise((r) => setTimeout(r, cpuProf ? 3000 : 300))
    fs.rmSync(home, { recursive: true, force: true })
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
