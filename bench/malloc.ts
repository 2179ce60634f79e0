/**
 * What fixing glibc's mmap threshold at 128 KB (docs/configuration.md, "Memory on Linux") costs
 * and saves: two built holdfasts (`npm run build` first) side by side, one with
 * glibc's own behaviour and one with the threshold fixed, each request sent to one and then the
 * other so a slow spell of this VM falls on both; three rounds, then 10 s idle. Prints p50, CPU per
 * request and RSS of each. Run: `node -r ./scripts/register.js bench/malloc.ts [requests=150]
 * [lanes=1] [bytes=1000000]` (with no MALLOC_MMAP_THRESHOLD_ of your own; `HOLDFAST_MALLOC_ENV="NAME=value …"`
 * sets another variant against glibc's own). Measures; asserts nothing.
 */
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import {
  type Proc,
  cpuMs,
  filler,
  pct,
  postJson,
  requestBody,
  rssMb,
  startFake,
  startHoldfast,
} from './procs'

const [N = 150, C = 1, BYTES = 1_000_000] = process.argv.slice(2).map(Number)

const agent = new http.Agent({ keepAlive: true, maxSockets: 2 * C })
const text = filler(BYTES)
const body = (i: number): Buffer => requestBody(i, text)

async function main(): Promise<void> {
  if (process.env.MALLOC_MMAP_THRESHOLD_ !== undefined || process.env.GLIBC_TUNABLES !== undefined) {
    process.stderr.write(
      'bench/malloc.ts compares against glibc defaults: unset MALLOC_MMAP_THRESHOLD_ and GLIBC_TUNABLES\n',
    )
    process.exit(2)
  }
  // HOLDFAST_MALLOC_ENV="NAME=value …": another variant to set against glibc's own behaviour.
  const variant = process.env.HOLDFAST_MALLOC_ENV
    ? Object.fromEntries(
        process.env.HOLDFAST_MALLOC_ENV.split(' ').map((kv) => kv.split('=') as [string, string]),
      )
    : { MALLOC_MMAP_THRESHOLD_: '131072' }
  const fake = await startFake()
  const config = {
    listen: { host: '127.0.0.1', port: 0 },
    providers: { anthropic: { dialect: 'anthropic', base_url: fake.url } },
  }
  const homes = [0, 1].map(() => fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-malloc-')))
  const targets: { label: string; proc: Proc; times: number[]; cpu: number }[] = [
    {
      label: "glibc's own",
      proc: await startHoldfast(homes[0] as string, config, [], {}),
      times: [],
      cpu: 0,
    },
    {
      label: Object.entries(variant)
        .map(([k, v]) => `${k}=${v}`)
        .join(' '),
      proc: await startHoldfast(homes[1] as string, config, [], variant),
      times: [],
      cpu: 0,
    },
  ]
  const rss = (field?: 'VmHWM'): string => targets.map((t) => rssMb(t.proc.pid, field).toFixed(0)).join(' / ')
  console.log(
    `${N} requests of ${(BYTES / 1e6).toFixed(2)} MB over ${C} lane(s) to each, ${new Date().toISOString().slice(0, 16)}Z, load ${os.loadavg()[0]?.toFixed(2)}; columns: ${targets.map((t) => t.label).join(' / ')}`,
  )
  try {
    for (const round of [1, 2, 3]) {
      for (const t of targets) {
        t.times = []
        t.cpu = cpuMs(t.proc.pid)
      }
      let next = 0
      await Promise.all(
        Array.from({ length: C }, async (_, lane) => {
          while (next < N) {
            const i = next++
            for (const t of targets)
              t.times.push(await postJson(agent, `${t.proc.url}/w/m/a/l${lane}/v1/messages`, body(i)))
          }
        }),
      )
      await new Promise((r) => setTimeout(r, 1500)) // the commits land
      const cpu = targets.map((t) => ((cpuMs(t.proc.pid) - t.cpu) / N).toFixed(2)).join(' / ')
      const lat = targets.map((t) => pct(t.times, 50).toFixed(2)).join(' / ')
      console.log(`round ${round}: p50 ms ${lat}; CPU ms per request ${cpu}; RSS MB ${rss()}`)
    }
    await new Promise((r) => setTimeout(r, 10_000))
    console.log(`after 10 s idle: RSS MB ${rss()}; peak ${rss('VmHWM')}`)
  } finally {
    for (const p of [...targets.map((t) => t.proc), fake]) p.child.kill('SIGTERM')
    agent.destroy()
    await new Promise((r) => setTimeout(r, 500))
    for (const h of homes) fs.rmSync(h, { recursive: true, force: true })
  }
}

void main()
