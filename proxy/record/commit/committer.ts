/**
 * Where step commits run: in a worker thread (the server: commits never compete with requests for
 * the event loop) or inline (one-shot commands, tests). A step is one message: its journal place
 * and how to finish it; the finish's summary comes back first, the commit after. Invariant: the
 * caller orders commits (one agent's are chained); a committer only executes them. A worker that
 * dies is started again and is sent again every commit it had not answered (a step already on its
 * branch is not committed twice); a commit that kills a worker three times fails.
 */
import path from 'node:path'
import { Worker } from 'node:worker_threads'
import {
  type CommitFault,
  type CommitReply,
  type CommitRequest,
  type CommitWorkerData,
  type WorkerMemory,
} from './messages'
import { maintain } from '../../store/git'
import { IDLE_COLLECT_MS } from '../../process/idle-collect'
import { type CommitJob, finishedHalf, recordFiles } from './job'
import { commitStep } from './step-commits'
import { type FinishSummary, summaryFor } from '../finish'
import { Workspace } from '../../store/workspace'
import { SOURCE_REGISTER } from '../../process/package-root'
import { Mutex } from '../../core/mutex'

export type { CommitFault, WorkerMemory }

export interface CommitOptions {
  /** After this many commits of its workspace, its packs are merged when idle (0: never). */
  maintainAfter?: number
  /** Called with the finish's summary (what the server logs) as soon as it is made. */
  onFinished?: (summary: FinishSummary) => void
}

export interface Committer {
  /** Finish and commit one step; resolves with its commit id once it is on its branch. */
  commit(home: string, ws: string, job: CommitJob, options?: CommitOptions): Promise<string>
  /** Merge the workspace repository's packs, never beside one of its commits. */
  maintain(home: string, ws: string): Promise<void>
  /** The commit thread's heap (MB), when commits run on a thread of their own that is running. */
  memory(): Promise<WorkerMemory | undefined>
  /** Workspaces whose commits wait on a disk fault (full, read-only, a lock), and since when. */
  faults(): Promise<CommitFault[]>
  /** Try every waiting commit again now. */
  retry(): Promise<void>
  close(): Promise<void>
}

export class InlineCommitter implements Committer {
  private readonly workspaces = new Map<string, { ws: Workspace; lock: Mutex }>()
  /** `durable`: packs and refs flushed to the disk before a commit resolves. */
  constructor(private readonly durable = false) {}
  /** One commit at a time per workspace, in call order, as the worker runs them. */
  commit(home: string, ws: string, job: CommitJob, options: CommitOptions = {}): Promise<string> {
    const key = `${home}\0${ws}`
    let w = this.workspaces.get(key)
    if (!w)
      this.workspaces.set(
        key,
        (w = { ws: new Workspace(home, ws, { durable: this.durable }), lock: new Mutex() }),
      )
    const workspace = w.ws
    const finished = finishedHalf(job)
    options.onFinished?.(summaryFor(finished))
    return w.lock.run(() =>
      commitStep(
        workspace.repo,
        { agent: job.agent, n: job.n, model: job.model, files: recordFiles(job, finished) },
        workspace.options,
      ),
    )
  }
  async maintain(home: string, ws: string): Promise<void> {
    await maintain(new Workspace(home, ws).repo.gitdir)
  }
  async memory(): Promise<undefined> {
    return undefined
  }
  async faults(): Promise<CommitFault[]> {
    return []
  }
  async retry(): Promise<void> {}
  async close(): Promise<void> {}
}

/**
 * The worker's entry beside this file; from sources (tests, bench) through the swc require hook.
 * Built, it inherits the process's own flags (`--cpu-prof` then profiles the worker too; given
 * explicitly, a V8 flag such as `--max-semi-space-size` would keep the worker from starting).
 */
function workerEntry(): { file: string; execArgv?: string[] } {
  const ext = path.extname(__filename)
  const file = path.join(__dirname, `worker${ext}`)
  if (ext !== '.ts') return { file }
  return { file, execArgv: ['-r', SOURCE_REGISTER] }
}

/**
 * The worker's young generation is capped: what it allocates (a step's files, its objects, a pack)
 * dies within a batch (docs/architecture.md, performance devices).
 */
const WORKER_LIMITS = { maxYoungGenerationSizeMb: 8 }

type Answer = string | WorkerMemory | CommitFault[] | undefined

interface Pending {
  message: CommitRequest
  resolve: (v: Answer) => void
  reject: (err: Error) => void
  onFinished?: (s: FinishSummary) => void
  /** Workers this message was sent to that died before answering it. */
  deaths: number
}

/** A commit sent to this many workers that each died before answering it fails. */
const MAX_DEATHS = 3

/** How long a close waits for the packs chains replaced to be removed. */
const RETIRED_WAIT_MS = 2000

export class WorkerCommitter implements Committer {
  private worker: Worker | undefined
  private nextId = 1
  private readonly pending = new Map<number, Pending>()
  private closing = false
  /**
   * Messages asked in this turn of the event loop: they go together, as one message, at its end
   * (docs/architecture.md, performance devices).
   */
  private outbox: CommitRequest[] = []
  private flushing: NodeJS.Immediate | undefined

  /**
   * `idleCollectMs`: the worker's own idle collection (holdfast.yaml `limits.idle_collect_ms`);
   * `durable`: packs and refs flushed to the disk before a commit is answered (`journal.fsync`);
   * `log`: where what the worker did unasked and failed at (a scheduled merge) is said.
   */
  constructor(
    private readonly idleCollectMs = IDLE_COLLECT_MS,
    private readonly durable = false,
    private readonly log?: { warn: (fields: Record<string, unknown>, line: string) => void },
  ) {}

  private ensure(): Worker {
    if (this.worker) return this.worker
    const { file, execArgv } = workerEntry()
    const workerData: CommitWorkerData = { idleCollectMs: this.idleCollectMs, durable: this.durable }
    const worker = new Worker(file, { execArgv, resourceLimits: WORKER_LIMITS, workerData })
    worker.on('message', (replies: CommitReply[]) => {
      for (const m of replies) {
        if ('notice' in m) {
          this.log?.warn(
            { ws: m.notice.ws, err: m.notice.error },
            `merging the packs of ${m.notice.ws} failed (${m.notice.error}); they stay as they are, and the next quiet moment tries again`,
          )
          continue
        }
        const p = this.pending.get(m.id)
        if (!p) continue
        if ('summary' in m) {
          p.onFinished?.(m.summary)
          p.onFinished = undefined // a commit sent again is not summed up twice
          continue
        }
        this.pending.delete(m.id)
        if ('error' in m) p.reject(Object.assign(new Error(m.error.message), { name: m.error.name }))
        else p.resolve(m.value)
      }
    })
    const fail = (err: Error): void => {
      if (this.worker !== worker) return
      this.worker = undefined
      // What was not sent yet was for this worker: it is sent again below with the rest.
      this.outbox = []
      clearImmediate(this.flushing)
      this.flushing = undefined
      const again: CommitRequest[] = []
      for (const [id, p] of this.pending) {
        if (!this.closing && p.message.kind === 'commit' && ++p.deaths < MAX_DEATHS) {
          again.push(p.message)
          continue
        }
        this.pending.delete(id)
        p.reject(err)
      }
      // The journal still holds every step: a new worker commits them, in the order they came.
      if (again.length > 0) {
        this.outbox = again
        this.flush()
      }
    }
    worker.on('error', fail)
    worker.on('exit', (code) => fail(new Error(`the commit worker exited (code ${code})`)))
    this.worker = worker
    return worker
  }

  /** Ask the worker; `now` sends at once, else at the end of this turn (order kept either way). */
  private ask<T extends Answer>(
    m: CommitRequest,
    now = false,
    onFinished?: (s: FinishSummary) => void,
  ): Promise<T> {
    this.ensure()
    return new Promise<T>((resolve, reject) => {
      this.pending.set(m.id, {
        message: m,
        resolve: resolve as (v: Answer) => void,
        reject,
        onFinished,
        deaths: 0,
      })
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

  commit(home: string, ws: string, job: CommitJob, options: CommitOptions = {}): Promise<string> {
    const m: CommitRequest = {
      kind: 'commit',
      id: this.nextId++,
      home,
      ws,
      job,
      maintainAfter: options.maintainAfter ?? 0,
      summary: options.onFinished !== undefined,
    }
    return this.ask<string>(m, false, options.onFinished)
  }

  async maintain(home: string, ws: string): Promise<void> {
    await this.ask({ kind: 'maintain', id: this.nextId++, home, ws })
  }

  /** Asked only of a running worker: a health check does not start one. */
  async memory(): Promise<WorkerMemory | undefined> {
    if (!this.worker) return undefined
    return this.ask<WorkerMemory>({ kind: 'memory', id: this.nextId++ }, true)
  }

  async faults(): Promise<CommitFault[]> {
    if (!this.worker) return []
    return this.ask<CommitFault[]>({ kind: 'faults', id: this.nextId++ }, true)
  }

  async retry(): Promise<void> {
    if (!this.worker) return
    await this.ask({ kind: 'retry', id: this.nextId++ }, true)
  }

  async close(): Promise<void> {
    // The packs chains replaced are removed first (a round is at most a second away), so a
    // stopped serve leaves no pack that only repeats another; bounded, as the whole shutdown is.
    if (this.worker && !this.closing) {
      let timer: NodeJS.Timeout | undefined
      await Promise.race([
        this.ask({ kind: 'retired', id: this.nextId++ }, true).catch(() => undefined),
        new Promise((r) => (timer = setTimeout(r, RETIRED_WAIT_MS))),
      ])
      clearTimeout(timer)
    }
    this.closing = true
    const w = this.worker
    this.worker = undefined
    // What waits in the outbox is answered, as every pending message, when the worker exits.
    clearImmediate(this.flushing)
    this.flushing = undefined
    for (const [id, p] of this.pending) {
      this.pending.delete(id)
      p.reject(new Error('the committer was closed'))
    }
    if (w) await w.terminate()
  }
}
