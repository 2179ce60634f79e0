/**
 * The step after an idle period: what giving memory back when idle (`limits.idle_collect_ms`: a
 * full collection, then glibc's malloc_trim) costs the next request, which finds its pages handed
 * back. Two holdfasts of the same build side by side, one as configured and one with
 * `idle_collect_ms: 0`; each round sends both a burst (`lanes` lanes of `bytes` requests, one agent
 * per lane), waits `idle` ms (past the 3 s idle time), then times one request to each, on the agent
 * of lane 0. Prints the p50 of those after-idle requests, of the bursts' and of each holdfast's
 * RSS at the end of the idle time. Built holdfast (`npm run build` first; `HOLDFAST_BENCH_ROOT=<dir>`: another
 * checkout's build). Run: `node -r ./scripts/register.js bench/after-idle.ts [rounds=8]
 * [bytes=1000000] [lanes=32] [idle=4000]`. Asserts nothing.
 */
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { filler, health, pct, postJson, requestBody, rssMb, startFake, startHoldfast } from './procs'

const [ROUNDS, BYTES, LANES, IDLE] = [8, 1_000_000, 32, 4000].map((d, i) =>
  Number(process.argv[2 + i] ?? d),
) as [number, number, number, number]
/** Connections live for one burst or one request: the server closes the ones left idle (as a client's would find). */
const fresh = new http.Agent({ keepAlive: false })
const text = filler(BYTES)

/** `LANES` requests at once, lane k as agent `l<k>`; their times, ms. */
async function burst(url: string, round: number): Promise<number[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 })
  try {
    return await Promise.all(
      Array.from({ length: LANES }, (_, lane) =>
        postJson(agent, `${url}/w/idle/a/l${lane}/v1/messages`, requestBody(round * LANES + lane, text)),
      ),
    )
  } finally {
    agent.destroy()
  }
}

async function main(): Promise<void> {
  const fake = await startFake()
  const homes = [0, 1].map(() => fs.mkdtempSync(path.join(os.tmpdir(), 'hf-after-idle-')))
  const config = (limits: object): object => ({
    listen: { host: '127.0.0.1', port: 0 },
    providers: { anthropic: { dialect: 'anthropic', base_url: fake.url } },
    limits,
  })
  const targets = [
    { name: 'idle collection (as configured)', proc: await startHoldfast(homes[0] as string, config({})) },
    {
      name: 'idle_collect_ms: 0',
      proc: await startHoldfast(homes[1] as string, config({ idle_collect_ms: 0 })),
    },
  ]
  try {
    process.stdout.write(
      `${ROUNDS} rounds: a burst of ${LANES} × ${BYTES / 1e3} KB, ${IDLE} ms idle, one request; ${new Date().toISOString().slice(0, 16)}Z, load ${os.loadavg()[0]?.toFixed(2)}\n`,
    )
    const after: number[][] = [[], []]
    const during: number[][] = [[], []]
    const idleRss: number[][] = [[], []]
    for (let round = 0; round <= ROUNDS; round++) {
      // The two take turns going first, so neither always meets the machine after the other's burst.
      const order = round % 2 === 0 ? [0, 1] : [1, 0]
      for (const k of order) {
        const times = await burst((targets[k] as (typeof targets)[number]).proc.url, round)
        if (round > 0) during[k]?.push(...times)
      }
      await new Promise((r) => setTimeout(r, IDLE))
      for (const [k, t] of targets.entries()) if (round > 0) idleRss[k]?.push(rssMb(t.proc.pid))
      for (const k of order) {
        const t = targets[k] as (typeof targets)[number]
        const ms = await postJson(fresh, `${t.proc.url}/w/idle/a/l0/v1/messages`, requestBody(-round, text))
        // Round 0 warms both (JIT, the workspace, the first collection) and is not counted.
        if (round > 0) after[k]?.push(ms)
      }
    }
    for (const [k, t] of targets.entries()) {
      const h = await health<{
        idle_collection_ms?: object
        malloc_trim_ms?: object
      }>(t.proc)
      process.stdout.write(
        `${t.name}: after idle p50 ${pct(after[k] ?? [], 50).toFixed(2)} ms (all: ${(after[k] ?? []).map((x) => x.toFixed(1)).join(' ')}); ` +
          `in the bursts p50 ${pct(during[k] ?? [], 50).toFixed(1)} ms; RSS when idle p50 ${pct(idleRss[k] ?? [], 50).toFixed(1)} MB; ` +
          `last idle collection ${JSON.stringify(h.idle_collection_ms ?? null)}, malloc trim ${JSON.stringify(h.malloc_trim_ms ?? null)}\n`,
      )
    }
  } finally {
    for (const t of targets) t.proc.child.kill('SIGTERM')
    fake.child.kill('SIGTERM')
    fresh.destroy()
    await new Promise((r) => setTimeout(r, 300))
    for (const h of homes) fs.rmSync(h, { recursive: true, force: true })
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
