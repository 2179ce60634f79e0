/**
 * The commit worker: a worker thread that finishes steps (decode, usage, cost) and turns them into
 * commits, so zlib, SHA-1 and file writes never run on the thread that serves requests. Steps that
 * queue up while a batch is being written are committed together as one pack (each still its own
 * commit), so commits keep up with any request rate; once a workspace's commits go quiet, its many
 * small packs are merged (git repack --geometric). Invariant: one job at a time per workspace (a
 * repack never runs beside a commit of its repository), and every request is answered, with its
 * result or the error. Requests come in arrays (what the server asked in one turn) and answers go
 * back in arrays (those given in one turn here: a message's finishes, a batch's commits).
 */
import { parentPort, workerData } from 'node:worker_threads'
import { IDLE_COLLECT_MS, IdleCollector } from '../idle-collect'
import { dropPackBytes } from './git-repo'
import { maintain } from './git-run'
import { type CommitJob, FinishedSteps, recordFiles } from '../record'
import { finishStep, type FinishJob, type FinishSummary, summaryOf } from '../record/finish'
import type { StepToCommit } from './step-commits'
import { Workspace } from './workspace'

export type CommitRequest =
  | { kind: 'commit'; id: number; home: string; ws: string; job: CommitJob; maintainAfter: number }
  | { kind: 'maintain'; id: number; home: string; ws: string }
  | { kind: 'finish'; id: number; job: FinishJob }
  | { kind: 'memory'; id: number }
export type CommitReply =
  | { id: number; value: string | FinishSummary | WorkerMemory | undefined }
  | { id: number; error: { name: string; message: string } }
/** What the worker is started with. */
export interface CommitWorkerData {
  /** After this long with no message unanswered, one full collection of the worker's heap (0 = never). */
  idleCollectMs: number
}
type QueuedJob = Exclude<CommitRequest, { kind: 'finish' | 'memory' }>
/** The worker's own heap (its isolate), in bytes as `process.memoryUsage()` says them, and how long its last idle collection and trim took. */
export type WorkerMemory = Pick<
  NodeJS.MemoryUsage,
  'heapUsed' | 'heapTotal' | 'external' | 'arrayBuffers'
> & {
  lastCollectionMs: number | null
  lastTrimMs: number | null
}

type Reply = (r: CommitReply) => void

interface Queue {
  ws: Workspace
  jobs: QueuedJob[]
  running: boolean
  /** Agents whose commits were given up: their later steps stay in the journal until a restart. */
  stalled: Map<string, Error>
  /** Agents with a step whose finished half this worker never had, by that step. */
  lostFinish: Map<string, { n: number; err: Error }>
  /** Step commits since the last repack, and after how many to repack (the latest request's setting). */
  sinceMaintain: number
  maintainAfter: number
  idleTimer?: NodeJS.Timeout
}

const errorReply = (id: number, err: unknown): CommitReply => ({
  id,
  error: { name: (err as Error)?.name ?? 'Error', message: (err as Error)?.message ?? String(err) },
})

const BATCH_WINDOW_MS = 20
const BUSY_WINDOW_MS = 100
/** At most this many steps, or about this many bytes of their files, in one pack. */
const BATCH_MAX_STEPS = 512
const BATCH_MAX_BYTES = 8 * 1024 * 1024
/** Pack files read whole (to find a tree no cache had) kept between batches, over all of them. */
const PACK_BYTES_KEPT = 64 * 1024 * 1024
/** A workspace whose commits were quiet this long gets its packs merged (when enough piled up). */
const MAINTAIN_IDLE_MS = 2000

type Commit = Extract<CommitRequest, { kind: 'commit' }>

/** Backoff before retrying an agent whose branch could not be moved (≈ 40 s in all, then give up). */
const RETRY_MS = [50, 200, 1000, 3000, 10_000, 25_000]

/** Run a workspace's queued jobs: consecutive commits as one batch, a maintain on its own. */
async function drain(q: Queue, reply: Reply): Promise<void> {
  q.running = true
  clearTimeout(q.idleTimer)
  const attempts = new Map<string, number>()
  let lastBatch = Date.now()
  let batches = 0
  for (;;) {
    // A gathering window: a batch starts BATCH_WINDOW_MS after the first job came, and under
    // sustained load (jobs came while the previous batch was written) BUSY_WINDOW_MS after the
    // previous one, so steps that finish meanwhile share one pack and one ref move per agent and
    // commits cost less each instead of falling behind. Without it a busy agent's steps went one or
    // two per pack, and 32 busy agents moved a ref per step (a ref swap is ≈ 0.25–0.37 ms of system
    // time here: bench/commit.ts 2000 32 32 against 2000 32 320). A person waits 1–100 s between
    // turns; 20 or 100 ms is invisible to them.
    const wait = lastBatch + (batches++ === 0 ? BATCH_WINDOW_MS : BUSY_WINDOW_MS) - Date.now()
    if (wait > 0 && q.jobs.length < BATCH_MAX_STEPS) await new Promise((r) => setTimeout(r, wait))
    lastBatch = Date.now()
    const first = q.jobs[0]
    if (!first) break
    if (first.kind === 'maintain') {
      q.jobs.shift()
      q.sinceMaintain = 0
      await maintain(q.ws.repo.gitdir).then(
        () => reply({ id: first.id, value: undefined }),
        (err: unknown) => reply(errorReply(first.id, err)),
      )
      continue
    }
    const batch: Commit[] = []
    const steps: StepToCommit[] = []
    let bytes = 0
    // A backlog is committed in bounded batches: one pack of thousands of steps held every file
    // of every step in memory at once (240 MB for 4 000 steps of 10 KB conversations).
    while (q.jobs[0]?.kind === 'commit' && batch.length < BATCH_MAX_STEPS && bytes < BATCH_MAX_BYTES) {
      const j = q.jobs.shift() as Commit
      const { job } = j
      const lost = q.lostFinish.get(job.agent)
      // Until the step whose finish was lost comes again with its half, the agent's later steps wait.
      if (lost && job.n === lost.n && job.finished) q.lostFinish.delete(job.agent)
      const stalled = q.stalled.get(job.agent) ?? q.lostFinish.get(job.agent)?.err
      if (stalled) {
        reply(errorReply(j.id, stalled))
        continue
      }
      let whole, files
      try {
        whole = finished.complete(q.ws.name, job)
        files = recordFiles(whole)
      } catch (err) {
        // Only this step fails (its finish was lost, or its journal cannot be read); the agent's later
        // steps must not be committed before it: they fail too until it is sent again with its half
        // (or a restart recovers them).
        q.lostFinish.set(job.agent, { n: job.n, err: err as Error })
        reply(errorReply(j.id, err))
        continue
      }
      for (const f of Object.values(files)) bytes += f.length
      steps.push({ agent: job.agent, n: job.n, model: job.model, files })
      // Kept with its finished half: a retry of this step commits it again without asking for it.
      batch.push({ ...j, job: whole })
    }
    if (batch.length === 0) continue
    let done
    try {
      done = await q.ws.commitSteps(steps)
    } catch (err) {
      for (const j of batch) reply(errorReply(j.id, err))
      continue
    }
    await dropPackBytes(q.ws.repo, PACK_BYTES_KEPT)
    const again: Commit[] = []
    for (const agent of done.failed.keys()) attempts.set(agent, (attempts.get(agent) ?? 0) + 1)
    for (const j of batch) {
      const { agent, n } = j.job
      const failure = done.failed.get(agent) ?? q.stalled.get(agent)
      if (!failure) {
        reply({ id: j.id, value: done.oids.get(`${agent}/${n}`) ?? '' })
        attempts.delete(agent)
        q.sinceMaintain++
        q.maintainAfter = j.maintainAfter
      } else if (!q.stalled.has(agent) && (attempts.get(agent) ?? 0) <= RETRY_MS.length) {
        // The agent's branch could not move: retry its steps, in order, ahead of anything newer.
        again.push(j)
      } else {
        // Given up: this agent's later steps must not be committed before this one.
        q.stalled.set(agent, failure)
        reply(errorReply(j.id, failure))
      }
    }
    if (again.length > 0) {
      const wait = Math.max(...again.map((j) => RETRY_MS[(attempts.get(j.job.agent) ?? 1) - 1] ?? 0))
      await new Promise((r) => setTimeout(r, wait))
      q.jobs.unshift(...again)
    }
  }
  q.running = false
  scheduleMaintain(q, reply)
}

/** Once the workspace is quiet, merge the packs its commits piled up (never beside a burst). */
function scheduleMaintain(q: Queue, reply: Reply): void {
  if (q.maintainAfter <= 0 || q.sinceMaintain < q.maintainAfter) return
  q.idleTimer = setTimeout(() => {
    if (q.running || q.jobs.length > 0) return
    q.jobs.push({ kind: 'maintain', id: -1, home: q.ws.home, ws: q.ws.name })
    void drain(q, (r) => {
      // The scheduled repack answers no one: a failure is only logged by the next start's gc.
      if (r.id !== -1) reply(r)
    })
  }, MAINTAIN_IDLE_MS)
  q.idleTimer.unref()
}

/** Each step's finished half, from its finish to its commit. */
const finished = new FinishedSteps()

if (parentPort) {
  const port = parentPort
  const queues = new Map<string, Queue>()
  // Every request is answered once: from a request to its answer, it is in flight.
  const idle = new IdleCollector((workerData as CommitWorkerData | null)?.idleCollectMs ?? IDLE_COLLECT_MS)
  // Answers go together: all those given in one turn (a message's, a batch's) as one message.
  let outbox: CommitReply[] = []
  const flush = (): void => {
    const sent = outbox
    outbox = []
    port.postMessage(sent)
  }
  // `grows` false for a health poll's answer: it puts no idle collection off.
  const reply = (r: CommitReply, grows = true): void => {
    if (outbox.push(r) === 1) queueMicrotask(flush)
    idle.end(grows)
  }
  const take = (m: CommitRequest): void => {
    idle.begin(m.kind !== 'memory')
    if (m.kind === 'memory') {
      const { heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage()
      const lastCollectionMs = idle.lastCollectionMs ?? null
      const lastTrimMs = idle.lastTrimMs ?? null
      reply(
        { id: m.id, value: { heapUsed, heapTotal, external, arrayBuffers, lastCollectionMs, lastTrimMs } },
        false,
      )
      return
    }
    if (m.kind === 'finish') {
      // Computed at once, never queued behind commits: the step's commit waits for this.
      try {
        const f = finishStep(m.job)
        finished.keep(f)
        reply({ id: m.id, value: summaryOf(f.meta) })
      } catch (err) {
        reply(errorReply(m.id, err))
      }
      return
    }
    const key = `${m.home}\0${m.ws}`
    let q = queues.get(key)
    if (!q)
      queues.set(
        key,
        (q = {
          ws: new Workspace(m.home, m.ws),
          jobs: [],
          running: false,
          stalled: new Map(),
          lostFinish: new Map(),
          sinceMaintain: 0,
          maintainAfter: 0,
        }),
      )
    q.jobs.push(m)
    if (!q.running) void drain(q, reply)
  }
  port.on('message', (ms: CommitRequest[]) => {
    for (const m of ms) take(m)
  })
}
