/**
 * Where step commits run: in a worker thread (the server: commits never compete with requests
 * for the event loop) or inline (recovery at start, one-shot commands). Invariant: the caller
 * orders commits (one agent's are chained); a committer only executes them. A worker that dies
 * fails its pending commits (they stay in the journal, recovered at the next start) and is
 * started again for the next one.
 */
import path from 'node:path'
import { Worker } from 'node:worker_threads'
import type { CommitReply, CommitRequest, CommitWorkerData, WorkerMemory } from './commit-worker'
import { maintain } from './git-run'
import { IDLE_COLLECT_MS } from '../idle-collect'
import { type CommitJob, FinishedSteps, recordFiles } from '../record'
import { finishStep, type FinishJob, type FinishSummary, summaryOf } from '../record/finish'
import { Workspace } from './workspace'
import { SOURCE_REGISTER } from '../package-root'
import { Mutex } from '../agents'

export interface Committer {
  /** Commit one step; `maintainAfter` commits of its workspace later, its packs are merged when idle (0: never). */
  commit(home: string, ws: string, job: CommitJob, maintainAfter?: number): Promise<string>
  /** Merge the workspace repository's packs, never beside one of its commits. */
  maintain(home: string, ws: string): Promise<void>
  /** A step's finish half (decode, usage, cost), kept for its commit; returns what the server logs. */
  finish(job: FinishJob): Promise<FinishSummary>
  /** The commit thread's heap (MB), when commits run on a thread of their own that is running. */
  memory(): Promise<WorkerMemory | undefined>
  close(): Promise<void>
}

export class InlineCommitter implements Committer {
  private readonly workspaces = new Map<string, { ws: Workspace; lock: Mutex }>()
  private readonly finished = new FinishedSteps()
  /** One commit at a time per workspace, in call order, as the worker runs them. */
  commit(home: string, ws: string, job: CommitJob): Promise<string> {
    const key = `${home}\0${ws}`
    let w = this.workspaces.get(key)
    if (!w) this.workspaces.set(key, (w = { ws: new Workspace(home, ws), lock: new Mutex() }))
    const workspace = w.ws
    return w.lock.run(() => {
      const whole = this.finished.complete(ws, job)
      return workspace.commitStep({ agent: job.agent, n: job.n, model: job.model, files: recordFiles(whole) })
    })
  }
  async maintain(home: string, ws: string): Promise<void> {
    await maintain(new Workspace(home, ws).repo.gitdir)
  }
  async finish(job: FinishJob): Promise<FinishSummary> {
    const f = finishStep(job)
    this.finished.keep(f)
    return summaryOf(f.meta)
  }
  async memory(): Promise<undefined> {
    return undefined
  }
  async close(): Promise<void> {}
}

/**
 * The worker's entry beside this file; from sources (tests, bench) through the swc require hook.
 * Built, it inherits the process's own flags (`--cpu-prof` then profiles the worker too; given
 * explicitly, a V8 flag such as `--max-semi-space-size` would keep the worker from starting).
 */
function workerEntry(): { file: string; execArgv?: string[] } {
  const ext = path.extname(__filename)
  const file = path.join(__dirname, `commit-worker${ext}`)
  if (ext !== '.ts') return { file }
  return { file, execArgv: ['-r', SOURCE_REGISTER] }
}

/**
 * The worker's young generation is capped: what it allocates (a step's files, its objects, a pack)
 * dies within a batch, and V8's default let its heap grow to 46–49 MB holding 13–26 (the progress
 * lines of `npm run bench -- --quick`; 21–31 holding 12–15 with the cap), for no CPU saved (bench/profile.ts at 1 and 32
 * lanes, with and without the cap, within noise).
 */
const WORKER_LIMITS = { maxYoungGenerationSizeMb: 8 }

type Answer = string | FinishSummary | WorkerMemory | undefined

export class WorkerCommitter implements Committer {
  private worker: Worker | undefined
  private nextId = 1
  private readonly pending = new Map<number, { resolve: (v: Answer) => void; reject: (err: Error) => void }>()
  /**
   * Messages asked in this turn of the event loop: they go together, as one message, at its end.
   * Each message wakes the worker and is answered with one; at 32 lanes one message carried many
   * steps' finishes and commits, and a 10 KB step cost 1.03–1.05 ms of CPU in all against
   * 1.10 (bench/profile.ts 3000 32, alternating twice). Waiting longer for more (5 ms) put a
   * step's finish inside the next one's request at one lane: no gain there, a loss in one run.
   */
  private outbox: CommitRequest[] = []
  private flushing: NodeJS.Immediate | undefined

  /** `idleCollectMs`: the worker's own idle collection (holdfast.yaml `limits.idle_collect_ms`). */
  constructor(private readonly idleCollectMs = IDLE_COLLECT_MS) {}

  private ensure(): Worker {
    if (this.worker) return this.worker
    const { file, execArgv } = workerEntry()
    const workerData: CommitWorkerData = { idleCollectMs: this.idleCollectMs }
    const worker = new Worker(file, { execArgv, resourceLimits: WORKER_LIMITS, workerData })
    worker.on('message', (replies: CommitReply[]) => {
      for (const m of replies) {
        const p = this.pending.get(m.id)
        if (!p) continue
        this.pending.delete(m.id)
        if ('error' in m) p.reject(Object.assign(new Error(m.error.message), { name: m.error.name }))
        else p.resolve(m.value)
      }
    })
    const fail = (err: Error): void => {
      if (this.worker === worker) this.worker = undefined
      // What was not sent yet was for this worker: its askers are answered below, not by the next one.
      this.outbox = []
      clearImmediate(this.flushing)
      this.flushing = undefined
      for (const [id, p] of this.pending) {
        this.pending.delete(id)
        p.reject(err)
      }
    }
    worker.on('error', fail)
    worker.on('exit', (code) => fail(new Error(`the commit worker exited (code ${code})`)))
    this.worker = worker
    return worker
  }

  /** Ask the worker; `now` sends at once, else at the end of this turn (order kept either way). */
  private ask<T extends Answer>(m: CommitRequest, now = false): Promise<T> {
    this.ensure()
    return new Promise<T>((resolve, reject) => {
      this.pending.set(m.id, { resolve: resolve as (v: Answer) => void, reject })
      this.outbox.push(m)
      if (now) this.flush()
      else this.flushing ??= setImmediate(() => this.flush())
    })
  }

  private flush(): void {
    clearImmediate(this.flushing)
    this.flushing = undefined
    if (this.outbox.length === 0) return
    const sent = this.outbox
    this.outbox = []
    this.ensure().postMessage(sent)
  }

  commit(home: string, ws: string, job: CommitJob, maintainAfter = 0): Promise<string> {
    return this.ask<string>({ kind: 'commit', id: this.nextId++, home, ws, job, maintainAfter })
  }

  finish(job: FinishJob): Promise<FinishSummary> {
    return this.ask<FinishSummary>({ kind: 'finish', id: this.nextId++, job })
  }

  async maintain(home: string, ws: string): Promise<void> {
    await this.ask({ kind: 'maintain', id: this.nextId++, home, ws })
  }

  /** Asked only of a running worker: a health check does not start one. */
  async memory(): Promise<WorkerMemory | undefined> {
    if (!this.worker) return undefined
    return this.ask<WorkerMemory>({ kind: 'memory', id: this.nextId++ }, true)
  }

  async close(): Promise<void> {
    const w = this.worker
    this.worker = undefined
    // What waits in the outbox is answered, as every pending message, when the worker exits.
    clearImmediate(this.flushing)
    this.flushing = undefined
    if (w) await w.terminate()
  }
}
