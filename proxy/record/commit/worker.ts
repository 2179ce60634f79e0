/**
 * The commit worker: a worker thread that finishes steps (decode, usage, cost) and commits them, so
 * zlib, SHA-1 and file writes never run on the thread that serves requests. A step comes as one
 * message (its journal place and how to finish it); it is finished at once (the server hears the
 * summary) and queued; steps that queue up while a batch is written are committed together as one
 * pack (each its own commit). A disk fault (full, read-only, I/O error, a ref locked by git) never
 * drops a step: the batch waits and is tried again, with backoff, for as long as it takes, and the
 * fault is reported (health). Once a workspace's commits go quiet its many small packs are merged.
 * Invariant: one job at a time per workspace, an agent's steps committed in the order they came, a
 * step already on its branch never committed twice (a message sent again after a worker restart is
 * answered with the commit it has), and every request answered once.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { IDLE_COLLECT_MS, IdleCollector } from '../../process/idle-collect'
import { dropPackBytes, maintain, retired } from '../../store/git'
import { isTransientFault } from '../../store/faults'
import { commitSteps, type StepToCommit } from './step-commits'
import { Workspace } from '../../store/workspace'
import { type CommitJob, finishedHalf, recordFiles } from './job'
import { type Finished, type FinishSummary, summaryOf } from '../finish'

export type CommitRequest =
  | {
      kind: 'commit'
      id: number
      home: string
      ws: string
      job: CommitJob
      maintainAfter: number
      /** Answer the finish's summary as soon as it is made, before the commit. */
      summary: boolean
    }
  | { kind: 'maintain'; id: number; home: string; ws: string }
  | { kind: 'memory'; id: number }
  | { kind: 'faults'; id: number }
  /** Cut every backoff short: the fault may be gone (`holdfast recover`). */
  | { kind: 'retry'; id: number }
  /** Answered once the packs chains replaced are flushed away (before the worker is stopped). */
  | { kind: 'retired'; id: number }
export type CommitReply =
  | { id: number; value: string | WorkerMemory | CommitFault[] | undefined }
  | { id: number; summary: FinishSummary }
  | { id: number; error: { name: string; message: string } }
/** What the worker is started with. */
export interface CommitWorkerData {
  /** After this long with no message unanswered, one full collection of the worker's heap (0 = never). */
  idleCollectMs: number
  /** Packs and refs flushed to the disk before a commit is answered (holdfast.yaml `journal.fsync`). */
  durable?: boolean
}
/** The worker's own heap (its isolate), in bytes as `process.memoryUsage()` says them, and how long its last idle collection and trim took. */
export type WorkerMemory = Pick<
  NodeJS.MemoryUsage,
  'heapUsed' | 'heapTotal' | 'external' | 'arrayBuffers'
> & {
  lastCollectionMs: number | null
  lastTrimMs: number | null
}
/** A workspace whose commits wait on a fault, and since when. */
export interface CommitFault {
  home: string
  ws: string
  since: string
  error: string
  attempts: number
  /** Steps waiting for it to clear. */
  waiting: number
}

type Reply = (r: CommitReply) => void
type Commit = Extract<CommitRequest, { kind: 'commit' }>
type Queued = { kind: 'commit'; m: Commit; finished: Finished } | Extract<CommitRequest, { kind: 'maintain' }>

interface Queue {
  ws: Workspace
  jobs: Queued[]
  running: boolean
  /** Agents whose commit failed for a reason no retry mends: their later steps wait in the journal. */
  stalled: Map<string, Error>
  fault?: { since: string; error: string; attempts: number }
  /** Steps of the batch being written now. */
  writing: number
  /** Resolves the backoff being waited out, when one is. */
  wake?: () => void
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
/** Backoff while a fault lasts; the last step repeats for as long as it does. */
const RETRY_MS = [50, 200, 1000, 3000, 10_000, 30_000]

/** Wait `ms`, or less when `retry` wakes the queue. */
function backoff(q: Queue, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms)
    function done(): void {
      clearTimeout(t)
      q.wake = undefined
      resolve()
    }
    q.wake = done
  })
}

/** Run a workspace's queued jobs: consecutive commits as one batch, a maintain on its own. */
async function drain(q: Queue, reply: Reply): Promise<void> {
  q.running = true
  clearTimeout(q.idleTimer)
  let lastBatch = Date.now()
  let batches = 0
  for (;;) {
    // A gathering window: a batch starts BATCH_WINDOW_MS after the first job came, and under
    // sustained load BUSY_WINDOW_MS after the previous one, so steps that finish meanwhile share
    // one pack and one ref move per agent (docs/architecture.md, performance devices).
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
    const batch: Extract<Queued, { kind: 'commit' }>[] = []
    const steps: StepToCommit[] = []
    let bytes = 0
    // A backlog is committed in bounded batches: one pack of thousands of steps held every file
    // of every step in memory at once.
    while (q.jobs[0]?.kind === 'commit' && batch.length < BATCH_MAX_STEPS && bytes < BATCH_MAX_BYTES) {
      const j = q.jobs.shift() as Extract<Queued, { kind: 'commit' }>
      const { job } = j.m
      const stalled = q.stalled.get(job.agent)
      if (stalled) {
        reply(errorReply(j.m.id, stalled))
        continue
      }
      let files
      try {
        files = recordFiles(job, j.finished)
      } catch (err) {
        if (isTransientFault(err)) {
          // The journal cannot be read right now: this and everything after it waits.
          q.jobs.unshift(j)
          break
        }
        // Only this step fails; the agent's later steps must not be committed before it.
        q.stalled.set(job.agent, err as Error)
        reply(errorReply(j.m.id, err))
        continue
      }
      for (const f of Object.values(files)) bytes += f.length
      steps.push({ agent: job.agent, n: job.n, model: job.model, files })
      batch.push(j)
    }
    if (batch.length === 0) {
      if (q.jobs[0]?.kind === 'commit') await retryLater(q, new Error('the journal cannot be read'))
      continue
    }
    let done
    q.writing = batch.length
    try {
      done = await commitSteps(q.ws.repo, steps, q.ws.options)
    } catch (err) {
      q.writing = 0
      if (isTransientFault(err)) {
        q.jobs.unshift(...batch)
        await retryLater(q, err)
      } else for (const j of batch) reply(errorReply(j.m.id, err))
      continue
    }
    q.writing = 0
    await dropPackBytes(q.ws.repo, PACK_BYTES_KEPT)
    const again: typeof batch = []
    let fault: unknown
    for (const j of batch) {
      const { agent, n } = j.m.job
      const failure = done.failed.get(agent) ?? q.stalled.get(agent)
      if (!failure) {
        reply({ id: j.m.id, value: done.oids.get(`${agent}/${n}`) ?? '' })
        q.sinceMaintain++
        q.maintainAfter = j.m.maintainAfter
      } else if (!q.stalled.has(agent) && isTransientFault(failure)) {
        // The agent's branch could not move (locked, or moved under us): its steps go again, first.
        again.push(j)
        fault = failure
      } else {
        // Given up: this agent's later steps must not be committed before this one.
        q.stalled.set(agent, failure)
        reply(errorReply(j.m.id, failure))
      }
    }
    if (again.length > 0) {
      q.jobs.unshift(...again)
      await retryLater(q, fault)
    } else q.fault = undefined
  }
  q.running = false
  scheduleMaintain(q, reply)
}

/** Note the fault and wait out its backoff (cut short by a `retry`). */
async function retryLater(q: Queue, err: unknown): Promise<void> {
  const attempts = (q.fault?.attempts ?? 0) + 1
  q.fault = {
    since: q.fault?.since ?? new Date().toISOString(),
    error: (err as Error)?.message ?? String(err),
    attempts,
  }
  await backoff(q, RETRY_MS[Math.min(attempts, RETRY_MS.length) - 1] as number)
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

if (parentPort) {
  const port = parentPort
  const queues = new Map<string, Queue>()
  // Every request is answered once: from a request to its answer, it is in flight.
  const data = workerData as CommitWorkerData | null
  const idle = new IdleCollector(data?.idleCollectMs ?? IDLE_COLLECT_MS)
  // Answers go together: all those given in one turn (a message's, a batch's) as one message.
  let outbox: CommitReply[] = []
  const flush = (): void => {
    const sent = outbox
    outbox = []
    port.postMessage(sent)
  }
  const send = (r: CommitReply): void => {
    if (outbox.push(r) === 1) queueMicrotask(flush)
  }
  // `grows` false for a health poll's answer: it puts no idle collection off.
  const reply = (r: CommitReply, grows = true): void => {
    send(r)
    idle.end(grows)
  }
  const queueOf = (home: string, ws: string): Queue => {
    const key = `${home}\0${ws}`
    let q = queues.get(key)
    if (!q)
      queues.set(
        key,
        (q = {
          ws: new Workspace(home, ws, { durable: data?.durable === true }),
          jobs: [],
          running: false,
          writing: 0,
          stalled: new Map(),
          sinceMaintain: 0,
          maintainAfter: 0,
        }),
      )
    return q
  }
  const take = (m: CommitRequest): void => {
    const polled = m.kind === 'memory' || m.kind === 'faults' || m.kind === 'retry' || m.kind === 'retired'
    idle.begin(!polled)
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
    if (m.kind === 'faults') {
      const faults: CommitFault[] = []
      for (const q of queues.values())
        if (q.fault)
          faults.push({ home: q.ws.home, ws: q.ws.name, ...q.fault, waiting: q.jobs.length + q.writing })
      reply({ id: m.id, value: faults }, false)
      return
    }
    if (m.kind === 'retired') {
      void retired().then(() => reply({ id: m.id, value: undefined }, false))
      return
    }
    if (m.kind === 'retry') {
      for (const q of queues.values()) q.wake?.()
      reply({ id: m.id, value: undefined }, false)
      return
    }
    const q = queueOf(m.home, m.ws)
    if (m.kind === 'commit') {
      // Finished at once, never queued behind commits: the server logs the summary.
      const finished = finishedHalf(m.job)
      if (m.summary) send({ id: m.id, summary: summaryOf(finished.meta) })
      q.jobs.push({ kind: 'commit', m, finished })
    } else q.jobs.push(m)
    if (!q.running) void drain(q, reply)
  }
  port.on('message', (ms: CommitRequest[]) => {
    for (const m of ms) take(m)
  })
}
