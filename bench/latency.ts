/**
 * Added latency at 10 KB JSON (or the bytes given), one client, with direct, bare-forwarder and holdfast requests
 * interleaved one by one (request i goes to each of the three in turn), so the three see the same
 * moment of this shared machine and holdfast's commits spread over the time of all three: the
 * request path's own cost, where `npm run bench` measures blocks of back-to-back requests. Built
 * holdfast (`npm run build` first; `HOLDFAST_BENCH_ROOT=<dir>`: another checkout's build). Run:
 * `node -r ./scripts/register.js bench/latency.ts [requests=1500] [runs=3] [bytes=10000] [--sse]`;
 * `--sse` asks for event streams and times the first byte of each answer's body (the first event)
 * instead of its last. Asserts nothing.
 */
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { filler, pct, postTimed, startBare, startFake, startHoldfast } from './procs'

const SSE = process.argv.includes('--sse')
const args = process.argv.slice(2).filter((a) => !a.startsWith('--'))
const N = Number(args[0] ?? 1500)
const RUNS = Number(args[1] ?? 3)
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
const BYTES = Number(args[2] ?? 10_000)
const text = filler(BYTES)

/** Request `i` to `url`; resolves with its time to the last byte (with --sse, to the first), ms. */
async function post(url: string, i: number): Promise<number> {
  const body = JSON.stringify({
    model: 'claude-sonnet-4-5',
    max_tokens: 64,
    ...(SSE ? { stream: true } : {}),
    tools: [{ name: 'Read', description: 'read a file', input_schema: { type: 'object' } }],
    system: 'You are a benchmark.',
    messages: [{ role: 'user', content: `${i} ${text}` }],
  })
  const t = await postTimed(agent, url, body)
  return SSE ? t.ttfb : t.total
}

async function main(): Promise<void> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-latency-'))
  const fake = await startFake()
  const bare = await startBare(fake.url)
  const hf = await startHoldfast(home, {
    listen: { host: '127.0.0.1', port: 0 },
    providers: { anthropic: { dialect: 'anthropic', base_url: fake.url } },
  })
  try {
    process.stdout.write(
      `${N} interleaved ${BYTES >= 1e6 ? `${BYTES / 1e6} MB` : `${BYTES / 1e3} KB`} ${SSE ? 'SSE requests (time to the first event)' : 'JSON requests'} per target, ${new Date().toISOString().slice(0, 16)}Z, load ${os.loadavg()[0]?.toFixed(2)}\n`,
    )
    for (let run = 0; run <= RUNS; run++) {
      const urls = [
        `${fake.url}/v1/messages`,
        `${bare.url}/v1/messages`,
        `${hf.url}/w/latency/a/r${run}/v1/messages`,
      ]
      const times: number[][] = [[], [], []]
      for (let i = 0; i < N; i++) for (const [k, u] of urls.entries()) times[k]?.push(await post(u, i))
      const [d, b, h] = times.map((t) => pct(t, 50)) as [number, number, number]
      // Run 0 warms all three (JIT, connections, the workspace) and is not printed.
      if (run > 0)
        process.stdout.write(
          `run ${run}: p50 direct ${d.toFixed(3)} ms; added: bare +${(b - d).toFixed(3)}, holdfast +${(h - d).toFixed(3)}; holdfast over bare +${(h - b).toFixed(3)} ms\n`,
        )
    }
  } finally {
    for (const p of [hf, bare, fake]) p.child.kill('SIGTERM')
    agent.destroy()
    await new Promise((r) => setTimeout(r, 300))
    fs.rmSync(home, { recursive: true, force: true })
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
