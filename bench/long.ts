/**
 * A long conversation, as Claude Code sends one: each step is the previous request plus an
 * assistant message (text and a `tool_use`) and a user message (a `tool_result` of a few KB of
 * file-like text), the `cache_control` breakpoint moved to the new last block; ~41 KB at step 1 (7
 * KB of system in two blocks, 18 tools ≈ 32 KB) growing by ~5 KB a step (~800 KB at step 150);
 * `stream: true`; no pause between steps. Direct, the bare forwarder and holdfast take turns step by
 * step with the same bytes (one agent), then `agents` such conversations run at once through the
 * bare forwarder and through holdfast. Prints markdown: added p50 over direct and CPU per step
 * (all threads, commits included) early and late, as ratios to the bare forwarder; the repository
 * right after the last commit (no repack) against the final request; the journal left; the CPU
 * holdfast spends once the steps are done (maintenance) against the steps' own; and holdfast's RSS
 * at the end of the agents' run, its peak so far (VmHWM: the process's, whatever ran in it before)
 * and once it went quiet.
 *
 * `npm run build && node -r ./scripts/register.js bench/long.ts [steps=150] [agents=8]`
 * (`HOLDFAST_NODE_ARGS`: node flags for holdfast); `npm run bench` runs it too. Asserts nothing.
 */
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { Conversation } from '../test/support/conversation'
import {
  type Proc,
  cpuMs,
  landed,
  treeCpuMs,
  pct,
  postTimed,
  rssMb,
  startBare,
  startFake,
  startHoldfast,
  threads,
} from './procs'

/** Bytes of every file under `dir` (0 when it does not exist; a file removed while listed counts 0: a superseded pack). */
function duBytes(dir: string): number {
  if (!fs.existsSync(dir)) return 0
  let total = 0
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name)
    total += e.isDirectory() ? duBytes(p) : (fs.statSync(p, { throwIfNoEntry: false })?.size ?? 0)
  }
  return total
}

/**
 * CPU ms `pid` and its children spend from now until they spend none for `quietMs` (at most
 * `capMs`): longer than the commit worker's wait before it merges a quiet workspace's packs (2 s).
 */
async function cpuUntilQuiet(
  pid: number,
  quietMs = 8000,
  capMs = 180_000,
): Promise<{ cpu: number; ms: number }> {
  const c0 = treeCpuMs(pid)
  const t0 = Date.now()
  let last = c0
  let since = Date.now()
  while (Date.now() - t0 < capMs) {
    await new Promise((r) => setTimeout(r, 250))
    const now = treeCpuMs(pid)
    if (now !== last) {
      last = now
      since = Date.now()
    } else if (Date.now() - since >= quietMs) break
  }
  return { cpu: last - c0, ms: since - t0 }
}

/**
 * CPU ms each thread spent between two snapshots: the server thread, the busiest other thread
 * (the commit worker: Node 20 names every thread `node`), and the rest together (V8's helpers,
 * libuv's pool, the other workers).
 */
function threadSplit(
  before: ReturnType<typeof threads>,
  after: ReturnType<typeof threads>,
): { name: string; ms: number }[] {
  const spent = [...after].map(([tid, t]) => ({ name: t.name, ms: t.ms - (before.get(tid)?.ms ?? 0) }))
  const server = spent.filter((t) => t.name === 'server thread').reduce((n, t) => n + t.ms, 0)
  const others = spent.filter((t) => t.name !== 'server thread').sort((a, b) => b.ms - a.ms)
  const worker = others[0]?.ms ?? 0
  const rest = others.slice(1).reduce((n, t) => n + t.ms, 0)
  return [
    { name: 'server thread', ms: server },
    { name: 'commit worker', ms: worker },
    { name: 'other threads', ms: rest },
  ]
}

/** How long after the last commit the repository is measured: the replaced chain packs are gone by then. */
const RETIRED_MS = 2500

const MB = (n: number): string => (n / 1048576).toFixed(2)
const f = (x: number): string => (Number.isNaN(x) ? '-' : Math.abs(x) < 10 ? x.toFixed(2) : x.toFixed(1))

/** The workload against running processes; `home` is holdfast's (for its repository and journal). */
export async function longConversation(
  fake: Proc,
  bare: Proc,
  hf: Proc,
  home: string,
  steps = 150,
  agents = 8,
): Promise<string[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 })
  const early = Math.min(30, steps)
  const lateFrom = Math.max(1, steps - 29)
  // One agent: direct, bare and holdfast take turns, step by step, with the same bytes.
  const conv = new Conversation(1)
  const added = { bare: [] as number[], hf: [] as number[] }
  const cpu = { bare: { early: 0, late: 0 }, hf: { early: 0, late: 0 } }
  let finalBytes = 0
  // CPU over a range of steps: every commit before it landed at its start, and its own at its end.
  let mark = { bare: 0, hf: 0 }
  // The late steps' CPU by thread of holdfast's process.
  let lateThreads = threads(hf.pid)
  let byThread: { name: string; ms: number }[] = []
  for (let i = 1; i <= steps; i++) {
    if (i === 1 || i === lateFrom) {
      await landed(hf)
      mark = { bare: cpuMs(bare.pid), hf: cpuMs(hf.pid) }
      lateThreads = threads(hf.pid)
    }
    const b = conv.next()
    finalBytes = b.length
    const d = await postTimed(agent, `${fake.url}/v1/messages`, b)
    const r = await postTimed(agent, `${bare.url}/v1/messages`, b)
    const h = await postTimed(agent, `${hf.url}/w/long1/a/main/v1/messages`, b)
    added.bare.push(r.total - d.total)
    added.hf.push(h.total - d.total)
    if (i === early || i === steps) {
      await landed(hf)
      const range = i === early ? 'early' : 'late'
      cpu.bare[range] = cpuMs(bare.pid) - mark.bare
      cpu.hf[range] = cpuMs(hf.pid) - mark.hf
      if (range === 'late') byThread = threadSplit(lateThreads, threads(hf.pid))
    }
    if (i % 25 === 0)
      process.stderr.write(`long conversation: step ${i} of ${steps}, ${Math.round(b.length / 1000)} KB\n`)
  }
  // Right after the last commit, once the chain packs it replaced are gone (removed in rounds at
  // most a second apart, after their successor is flushed: proxy/store/git/chain.ts).
  await landed(hf)
  await new Promise((r) => setTimeout(r, RETIRED_MS))
  const repo1 = duBytes(path.join(home, 'workspaces', 'long1', 'repo.git', 'objects'))
  const journal1 = duBytes(path.join(home, 'workspaces', 'long1', 'journal'))
  const p50 = (xs: number[], from: number, to: number): number => pct(xs.slice(from - 1, to), 50)
  const per = (total: number, n: number): number => total / n

  // `agents` conversations at once: through the bare forwarder, then through holdfast.
  const convs = (): Conversation[] => Array.from({ length: agents }, (_, k) => new Conversation(100 + k))
  const run = async (url: (k: number) => string): Promise<number> => {
    let last = 0
    await Promise.all(
      convs().map(async (c, k) => {
        for (let i = 1; i <= steps; i++) {
          const b = c.next()
          if (k === 0 && i === steps) last = b.length
          await postTimed(agent, url(k), b)
        }
      }),
    )
    return last
  }
  let c0 = cpuMs(bare.pid)
  await run(() => `${bare.url}/v1/messages`)
  const bareMany = cpuMs(bare.pid) - c0
  c0 = cpuMs(hf.pid)
  await run((k) => `${hf.url}/w/long8/a/a${k}/v1/messages`)
  await landed(hf)
  const hfMany = cpuMs(hf.pid) - c0
  const rssEnd = rssMb(hf.pid)
  const quiet0 = treeCpuMs(hf.pid)
  await new Promise((r) => setTimeout(r, RETIRED_MS))
  const finalMany = convs()
    .map((c) => {
      let bytes = 0
      for (let i = 1; i <= steps; i++) bytes = c.next().length
      return bytes
    })
    .reduce((a, b) => a + b, 0)
  const repo8 = duBytes(path.join(home, 'workspaces', 'long8', 'repo.git', 'objects'))
  const after = await cpuUntilQuiet(hf.pid)
  after.cpu = treeCpuMs(hf.pid) - quiet0
  const repo8After = duBytes(path.join(home, 'workspaces', 'long8', 'repo.git', 'objects'))
  const [rssQuiet, peak] = [rssMb(hf.pid), rssMb(hf.pid, 'VmHWM')]
  const journal8 = duBytes(path.join(home, 'workspaces', 'long8', 'journal'))
  agent.destroy()

  return [
    `Long conversation: ${steps} steps, ${Math.round(finalBytes / 1000)} KB at the last (stream: true); early = steps 1–${early}, late = steps ${lateFrom}–${steps}.`,
    '',
    '| figure | bare forwarder | holdfast | holdfast / bare |',
    '|---|---|---|---|',
    `| added p50 over direct, early ms | ${f(p50(added.bare, 1, early))} | ${f(p50(added.hf, 1, early))} | +${f(p50(added.hf, 1, early) - p50(added.bare, 1, early))} ms |`,
    `| added p50 over direct, late ms | ${f(p50(added.bare, lateFrom, steps))} | ${f(p50(added.hf, lateFrom, steps))} | +${f(p50(added.hf, lateFrom, steps) - p50(added.bare, lateFrom, steps))} ms |`,
    `| CPU per step, early ms (all threads, commit included) | ${f(per(cpu.bare.early, early))} | ${f(per(cpu.hf.early, early))} | ${f(cpu.hf.early / cpu.bare.early)}× |`,
    `| CPU per step, late ms | ${f(per(cpu.bare.late, steps - lateFrom + 1))} | ${f(per(cpu.hf.late, steps - lateFrom + 1))} | ${f(cpu.hf.late / cpu.bare.late)}× |`,
    `| late CPU per step by thread ms | - | ${byThread.map((t) => `${t.name} ${f(t.ms / (steps - lateFrom + 1))}`).join(', ')} | - |`,
    `| ${agents} agents at once: CPU per step ms | ${f(per(bareMany, agents * steps))} | ${f(per(hfMany, agents * steps))} | ${f(hfMany / bareMany)}× |`,
    '',
    '| storage | bytes | × the final request(s) |',
    '|---|---|---|',
    `| repository objects after ${steps} steps, one agent, ${RETIRED_MS / 1000} s after the last commit | ${MB(repo1)} MB | ${f(repo1 / finalBytes)}× |`,
    `| repository objects, ${agents} agents, ${RETIRED_MS / 1000} s after the last commit | ${MB(repo8)} MB | ${f(repo8 / finalMany)}× |`,
    `| the same once holdfast went quiet (${(after.ms / 1000).toFixed(1)} s) | ${MB(repo8After)} MB | ${f(repo8After / finalMany)}× |`,
    `| journal left, one agent / ${agents} agents | ${MB(journal1)} / ${MB(journal8)} MB | - |`,
    '',
    `Memory: holdfast's RSS ${f(rssEnd)} MB when the ${agents} agents' last step landed, ${f(rssQuiet)} MB once quiet (no CPU for 8 s); peak so far (VmHWM) ${f(peak)} MB.`,
    '',
    `Maintenance: holdfast spent ${f(after.cpu)} ms of CPU after the ${agents}-agent run's last commit until quiet, ${f((100 * after.cpu) / hfMany)} % of the steps' own ${f(hfMany)} ms.`,
  ]
}

async function main(): Promise<void> {
  const steps = Number(process.argv[2] ?? 150)
  const agents = Number(process.argv[3] ?? 8)
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-long-'))
  const fake = await startFake()
  const hf = await startHoldfast(
    home,
    {
      listen: { host: '127.0.0.1', port: 0 },
      defaults: { workspace: 'long1', agent: 'main' },
      providers: { anthropic: { dialect: 'anthropic', base_url: fake.url } },
    },
    process.env.HOLDFAST_NODE_ARGS?.split(' ').filter((a) => a !== '') ?? [],
  )
  const bare = await startBare(fake.url)
  try {
    const lines = await longConversation(fake, bare, hf, home, steps, agents)
    process.stdout.write(`${lines.join('\n')}\n`)
  } finally {
    for (const p of [hf, bare, fake]) p.child.kill('SIGTERM')
    fs.rmSync(home, { recursive: true, force: true })
  }
}

if (require.main === module)
  main().catch((err: unknown) => {
    console.error(err)
    process.exit(1)
  })
