/**
 * The commit alone, in-process: CPU per step of `commitSteps` (build the trees, hash, deflate, write
 * one pack, move each agent's ref) for N steps of 10 KB requests over A agents, B steps per batch,
 * against the built holdfast (`npm run build` first; `HOLDFAST_BENCH_ROOT=<dir>`: another
 * checkout's build). Run: `node -r ./scripts/register.js bench/commit.ts [N=2000] [A=32] [B=32]`.
 * B = A is the worst case the commit worker meets (32 busy agents, one step each per batch); with
 * its 100 ms gathering window under load a batch holds several steps per agent.
 * `HOLDFAST_BENCH_HEAP=1`: also the JavaScript heap allocated per step, by the functions that
 * allocated most (V8's sampling heap profiler, objects already collected counted too; the CPU
 * figures of such a run are the profiler's as much as the commit's). Asserts nothing.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { StepToCommit } from '../proxy/record/commit/step-commits'
import { sampling } from './heap'

const ROOT = process.env.HOLDFAST_BENCH_ROOT ?? path.join(__dirname, '..')
const [N, A, B] = [2000, 32, 32].map((d, i) => Number(process.argv[2 + i] ?? d)) as [number, number, number]

interface Workspace {
  repo: unknown
  ensure(): Promise<void>
  /** An older build's: its Workspace committed. */
  commitSteps?(steps: readonly StepToCommit[]): Promise<unknown>
}
type CommitSteps = (repo: unknown, steps: readonly StepToCommit[]) => Promise<unknown>

async function main(): Promise<void> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Workspace } = require(path.join(ROOT, 'dist', 'proxy', 'store', 'workspace')) as {
    Workspace: new (home: string, name: string) => Workspace
  }
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-commit-bench-'))
  try {
    const ws = new Workspace(home, 'bench')
    await ws.ensure()
    // This build commits through record/commit (an older one's Workspace did it itself).
    const commit: (steps: readonly StepToCommit[]) => Promise<unknown> = ws.commitSteps
      ? (steps) => (ws.commitSteps as NonNullable<Workspace['commitSteps']>).call(ws, steps)
      : (() => {
          // eslint-disable-next-line @typescript-eslint/no-require-imports
          const m = require(path.join(ROOT, 'dist', 'proxy', 'record', 'commit', 'step-commits')) as {
            commitSteps: CommitSteps
          }
          return (steps) => m.commitSteps(ws.repo, steps)
        })()
    const filler = 'lorem ipsum dolor sit amet '.repeat(400).slice(0, 10_000)
    const next = new Map<string, number>()
    const step = (i: number): StepToCommit => {
      const agent = `a${i % A}`
      const n = (next.get(agent) ?? 0) + 1
      next.set(agent, n)
      const request = { model: 'm', messages: [{ role: 'user', content: `${i} ${filler}` }] }
      const answer = { id: `msg_${i}`, content: [{ type: 'text', text: 'hi' }], usage: { input_tokens: 9 } }
      return {
        agent,
        n,
        model: 'm',
        files: {
          'request.json': Buffer.from(JSON.stringify(request)),
          'response.json': Buffer.from(JSON.stringify(answer)),
          'meta.json': Buffer.from(JSON.stringify({ step: n, agent, note: filler.slice(0, 1500) }, null, 2)),
        },
      }
    }
    const batch = (from: number): StepToCommit[] => Array.from({ length: B }, (_, k) => step(from + k))
    for (let i = 0; i < 64; i += B) await commit(batch(i)) // warm
    const heap = process.env.HOLDFAST_BENCH_HEAP ? await sampling() : undefined
    const cpu0 = process.cpuUsage()
    const t0 = performance.now()
    for (let i = 0; i < N; i += B) await commit(batch(i))
    const cpu = process.cpuUsage(cpu0)
    if (heap) process.stdout.write(await heap(N, 'step'))
    const per = (us: number): string => (us / 1000 / N).toFixed(3)
    process.stdout.write(
      `${N} steps, ${A} agents, ${B} per batch (${path.basename(ROOT)}): CPU ${per(cpu.user + cpu.system)} ms per step ` +
        `(user ${per(cpu.user)}, system ${per(cpu.system)}), wall ${((performance.now() - t0) / N).toFixed(3)} ms\n`,
    )
  } finally {
    fs.rmSync(home, { recursive: true, force: true })
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
