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
import { dropAllPackBytes, maintain, retired } from '../../store/git'
import { isTransientFault } from '../../store/faults'
import {
  afterBatch,
  gatherWait,
  type Fault,
  type Look,
  MAINTAIN_IDLE_MS,
  maintainDue,
  nextTry,
  takeBatch,
} from './queue'
import { commitSteps, type StepToCommit } from './step-commits'
import { Workspace } from '../../store/workspace'
import { finishedHalf, recordFiles } from './job'
import { type Finished, summaryFor } from '../finish'
import type { CommitFault, CommitReply, CommitRequest, CommitWorkerData } from './messages'
import { SCHEDULED } from './messages'

export type { CommitFault, CommitReply, CommitRequest, CommitWorkerData, WorkerMemory } from './messages'

type Reply = (r: CommitReply) => void
type Commit = Extract<CommitRequest, { kind: 'commit' }>
type Queued = { kind: 'commit'; m: Commit; finished: Finished } | Extract<CommitRequest, { kind: 'maintain' }>

interface Queue {
  ws: Workspace
  jobs: Queued[]
  running: boolean
  /** Agents whose commit failed for a reason no retry mends: their later steps wait in the journal. */
  stalled: Map<string, Error>
  fault?: Fault
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

type QueuedCommit = Extract<Queued, { kind: 'commit' }>

/** A queued commit as the batch takes it: its files read from the journal now (record/commit/queue `Look`). */
function lookAt(q: Queue, j: QueuedCommit): Look<StepToCommit> {
  const { job } = j.m
  const stalled = q.stalled.get(job.agent)
  if (stalled) return { kind: 'refused', error: stalled }
  let files
  try {
    files = recordFiles(job, j.finished)
  } catch (err) {
    // The journal cannot be read right now: this and everything after it waits.
    if (isTransientFault(err)) return { kind: 'wait' }
    // Only this step fails; the agent's later steps must not be committed before it.
    q.stalled.set(job.agent, err as Error)
    return { kind: 'refused', error: err as Error }
  }
  let bytes = 0
  for (const f of Object.values(files)) bytes += f.length
  return { kind: 'step', step: { agent: job.agent, n: job.n, model: job.model, files }, bytes }
}

/** Run a workspace's queued jobs: consecutive commits as one batch, a maintain on its own. */
async function drain(q: Queue, reply: Reply): Promise<void> {
  q.running = true
  clearTimeout(q.idleTimer)
  let lastBatch = Date.now()
  let batches = 0
  for (;;) {
    const wait = gatherWait({ now: Date.now(), lastBatch, first: batches++ === 0, queued: q.jobs.length })
    if (wait > 0) await new Promise((r) => setTimeout(r, wait))
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
    const taken = takeBatch(
      q.jobs,
      (j) => j.kind === 'commit',
      (j) => lookAt(q, j as QueuedCommit),
    )
    for (const r of taken.refused) reply(errorReply((r.job as QueuedCommit).m.id, r.error))
    const batch = taken.batch.map((b) => b.job as QueuedCommit)
    if (batch.length === 0) {
      if (taken.waiting) await retryLater(q, new Error('the journal cannot be read'))
      continue
    }
    let done
    q.writing = batch.length
    try {
      done = await commitSteps(
        q.ws.repo,
        taken.batch.map((b) => b.step),
        q.ws.options,
      )
    } catch (err) {
      q.writing = 0
      if (isTransientFault(err)) {
        q.jobs.unshift(...batch)
        await retryLater(q, err)
      } else for (const j of batch) reply(errorReply(j.m.id, err))
      continue
    }
    q.writing = 0
    const again: typeof batch = []
    let fault: unknown
    for (const j of batch) {
      const { agent, n } = j.m.job
      const failure = done.failed.get(agent) ?? q.stalled.get(agent)
      const verdict = afterBatch(done.failed.get(agent), q.stalled.has(agent))
      if (verdict === 'committed') {
        reply({ id: j.m.id, value: done.oids.get(`${agent}/${n}`) ?? '' })
        q.sinceMaintain++
        q.maintainAfter = j.m.maintainAfter
      } else if (verdict === 'again') {
        // The agent's branch could not move (locked, or moved under us): its steps go again, first.
        again.push(j)
        fault = failure
      } else {
        // Given up: this agent's later steps must not be committed before this one.
        q.stalled.set(agent, failure as Error)
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
  const next = nextTry(q.fault, err, new Date().toISOString())
  q.fault = next.fault
  await backoff(q, next.waitMs)
}

/**
 * Once the workspace is quiet, merge the packs its commits piled up (never beside a burst). The
 * scheduled merge answers no one: a failure goes to the server as a notice (its log says why).
 */
function scheduleMaintain(q: Queue, reply: Reply): void {
  if (!maintainDue(q.sinceMaintain, q.maintainAfter)) return
  q.idleTimer = setTimeout(() => {
    if (q.running || q.jobs.length > 0) return
    q.jobs.push({ kind: 'maintain', id: SCHEDULED, home: q.ws.home, ws: q.ws.name })
    void drain(q, (r) => {
      if (r.id !== SCHEDULED) reply(r)
      else if ('error' in r)
        reply({ id: SCHEDULED, notice: { home: q.ws.home, ws: q.ws.name, error: r.error.message } })
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
  // The packs read whole to find a tree no cache had (bounded meanwhile: store/git/repo).
  idle.onIdle(dropAllPackBytes)
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
      if (m.summary) send({ id: m.id, summary: summaryFor(finished) })
      q.jobs.push({ kind: 'commit', m, finished })
    } else q.jobs.push(m)
    if (!q.running) void drain(q, reply)
  }
  port.on('message', (ms: CommitRequest[]) => {
    for (const m of ms) take(m)
  })
}
