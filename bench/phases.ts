/**
 * Memory by phase: the built proxy (`npm run build` first) runs the bench's load in phases — 3 000
 * 10 KB requests over 32 lanes, 100 × 1 MB on one, 200 × 1 MB over 32 (one agent per lane), 10 s
 * idle, the 1 MB × 32 phase again, 10 s idle — and after each prints its RSS, each thread's heap
 * (its health endpoint), how long each thread's last idle collection and malloc trim took, and the RSS by kind of mapping (/proc/<pid>/smaps: V8's 256 KB pages, larger
 * anonymous mappings, malloc's heap, files), and at the end the peak (VmHWM). `limits` (JSON,
 * optional) is merged into holdfast.yaml's. `HOLDFAST_NODE_ARGS` go to holdfast's node; with
 * `HOLDFAST_SNAPSHOT_DIR=<dir>` and bench/snapshot-preload.ts among them, every thread writes its
 * heap spaces (and a heap snapshot) there after each phase. Run: `node -r ./scripts/register.js
 * bench/phases.ts ['{"previous_cache_bytes":0}']`. Asserts nothing.
 */
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { filler, health, postJson, requestBody, rssMb, startFake, startHoldfast } from './procs'

const limits = JSON.parse(process.argv[2] ?? '{}') as object
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 })
const small = filler(10_000)
const large = filler(1_000_000)

/** `n` requests over `lanes` lanes, lane k as agent `<tag><k>`. */
async function run(url: string, n: number, lanes: number, text: string, tag: string): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: lanes }, async (_, lane) => {
      while (next < n) {
        const body = requestBody(next++, text, { system: 'You are a benchmark.' })
        await postJson(agent, `${url}/w/phases/a/${tag}${lane}/v1/messages`, body)
      }
    }),
  )
}

/** RSS MB by kind of mapping. */
function mappings(pid: number): string {
  const kinds = new Map<string, number>()
  let kind = ''
  for (const line of fs.readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/.exec(line)
    if (head) {
      const kb = (parseInt(head[2] as string, 16) - parseInt(head[1] as string, 16)) / 1024
      const name = head[3] ?? ''
      kind = name.includes('[heap]')
        ? 'malloc heap'
        : name === ''
          ? kb === 256
            ? 'V8 pages (256 KB)'
            : kb > 1024
              ? 'anonymous > 1 MB'
              : 'anonymous ≤ 1 MB'
          : name.startsWith('/')
            ? 'files'
            : 'other'
      continue
    }
    const rss = /^Rss:\s+(\d+)/.exec(line)
    if (rss) kinds.set(kind, (kinds.get(kind) ?? 0) + Number(rss[1]) / 1024)
  }
  return [...kinds]
    .sort((a, b) => b[1] - a[1])
    .map(([k, mb]) => `${k} ${mb.toFixed(1)}`)
    .join(', ')
}

async function main(): Promise<void> {
  const fake = await startFake()
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'hf-phases-'))
  const nodeArgs = process.env.HOLDFAST_NODE_ARGS?.split(' ').filter((a) => a !== '') ?? []
  const hf = await startHoldfast(
    home,
    {
      listen: { host: '127.0.0.1', port: 0 },
      providers: { anthropic: { dialect: 'anthropic', base_url: fake.url } },
      limits,
    },
    nodeArgs,
  )
  const snapshots = process.env.HOLDFAST_SNAPSHOT_DIR
  const t0 = Date.now()
  const show = async (phase: string): Promise<void> => {
    if (snapshots) {
      fs.writeFileSync(path.join(snapshots, 'take'), phase)
      await new Promise((r) => setTimeout(r, 2000))
    }
    const h = await health<{
      memory_mb: object
      previous_cache?: object
      idle_collection_ms?: object
      malloc_trim_ms?: object
    }>(hf)
    console.log(
      `${phase} (${((Date.now() - t0) / 1000).toFixed(0)} s): RSS ${rssMb(hf.pid).toFixed(1)} MB; heaps ${JSON.stringify(h.memory_mb)}; previous-request cache ${JSON.stringify(h.previous_cache ?? null)}; last idle collection, ms ${JSON.stringify(h.idle_collection_ms ?? null)}, malloc trim ${JSON.stringify(h.malloc_trim_ms ?? null)}\n  by mapping: ${mappings(hf.pid)}`,
    )
  }
  const idle = (): Promise<void> => new Promise((r) => setTimeout(r, 10_000))
  try {
    await new Promise((r) => setTimeout(r, 4000))
    await show('idle after start')
    await run(hf.url, 3000, 32, small, 'a')
    await show('10 KB × 3000, 32 lanes')
    await run(hf.url, 100, 1, large, 'b')
    await show('1 MB × 100, 1 lane')
    await run(hf.url, 200, 32, large, 'c')
    await show('1 MB × 200, 32 lanes')
    await idle()
    await show('10 s idle')
    await run(hf.url, 200, 32, large, 'd')
    await show('1 MB × 200, 32 lanes again')
    await idle()
    await show('10 s idle')
    console.log(`peak RSS (VmHWM) ${rssMb(hf.pid, 'VmHWM').toFixed(1)} MB`)
  } finally {
    hf.child.kill()
    fake.child.kill()
  }
}

void main()
