/**
 * The commit worker: a worker thread that turns journal steps into commits, so zlib, SHA-1 and
 * file writes never run on the thread that serves requests. Steps that queue up while a batch
 * is being written are committed together as one pack (each still its own commit), so commits
 * keep up with any request rate. Invariant: one job at a time per workspace (`git gc` never runs
 * beside a commit of its repository), and every message is answered, with the commit or the error.
 */
import { parentPort } from 'node:worker_threads'
import { maintain } from './git-run'
import { completeFinish, type FinishJob } from '../record/finish'
import { pruneJournal, type StepMeta } from '../record/journal'
import { Workspace } from './workspace'

export type CommitRequest =
  | { kind: 'commit'; id: number; home: string; ws: string; agent: string; n: number; model: string | null }
  | { kind: 'maintain'; id: number; home: string; ws: string }
  | { kind: 'finish'; id: number; job: FinishJob }
export type CommitReply =
  | { id: number; oid: string }
  | { id: number; meta: StepMeta }
  | { id: number; error: { name: string; message: string } }
type QueuedJob = Exclude<CommitRequest, { kind: 'finish' }>

type Reply = (r: CommitReply) => void

interface Queue {
  ws: Workspace
  jobs: QueuedJob[]
  running: boolean
  /** Agents whose commits were given up: their later steps stay in the journal until a restart. */
  stalled: Map<string, Error>
  /** Committed steps not yet pruned from the journal: agent → highest committed step. */
  prune: Map<string, number>
  unpruned: number
  pruneTimer?: NodeJS.Timeout
}

const errorReply = (id: number, err: unknown): CommitReply => ({
  id,
  error: { name: (err as Error)?.name ?? 'Error', message: (err as Error)?.message ?? String(err) },
})

const BATCH_WINDOW_MS = 20

type Commit = Extract<CommitRequest, { kind: 'commit' }>

/** Backoff before retrying an agent whose branch could not be moved (≈ 40 s in all, then give up). */
const RETRY_MS = [50, 200, 1000, 3000, 10_000, 25_000]

/** Run a workspace's queued jobs: consecutive commits as one batch, a maintain on its own. */
async function drain(q: Queue, reply: Reply): Promise<void> {
  q.running = true
  // A short gathering window: steps that finish meanwhile share one pack (and one ref move per
  // agent), so under load commits cost less each instead of falling behind. A person waits 1–100 s
  // between turns; 20 ms is invisible to them.
  await new Promise((r) => setTimeout(r, BATCH_WINDOW_MS))
  const attempts = new Map<string, number>()
  while (q.jobs.length > 0) {
    const first = q.jobs[0] as QueuedJob
    if (first.kind === 'maintain') {
      q.jobs.shift()
      await maintain(q.ws.repo.gitdir).then(
        () => reply({ id: first.id, oid: '' }),
        (err: unknown) => reply(errorReply(first.id, err)),
      )
      continue
    }
    const batch: Commit[] = []
    while (q.jobs[0]?.kind === 'commit') {
      const j = q.jobs.shift() as Commit
      const stalled = q.stalled.get(j.agent)
      if (stalled) reply(errorReply(j.id, stalled))
      else batch.push(j)
    }
    if (batch.length === 0) continue
    let done
    try {
      done = await q.ws.commitSteps(batch)
    } catch (err) {
      for (const j of batch) reply(errorReply(j.id, err))
      continue
    }
    const latest = new Map<string, number>()
    const again: Commit[] = []
    for (const agent of done.failed.keys()) attempts.set(agent, (attempts.get(agent) ?? 0) + 1)
    for (const j of batch) {
      const failure = done.failed.get(j.agent) ?? q.stalled.get(j.agent)
      if (!failure) {
        reply({ id: j.id, oid: done.oids.get(`${j.agent}/${j.n}`) ?? '' })
        latest.set(j.agent, Math.max(latest.get(j.agent) ?? 0, j.n))
      } else if (!q.stalled.has(j.agent) && (attempts.get(j.agent) ?? 0) <= RETRY_MS.length) {
        // The agent's branch could not move: retry its steps, in order, ahead of anything newer.
        again.push(j)
      } else {
        // Given up: this agent's later steps must not be committed before this one.
        q.stalled.set(j.agent, failure)
        reply(errorReply(j.id, failure))
      }
    }
    for (const [agent, n] of latest) {
      attempts.delete(agent)
      q.prune.set(agent, n)
      q.unpruned++
    }
    if (again.length > 0) {
      const wait = Math.max(...again.map((j) => RETRY_MS[(attempts.get(j.agent) ?? 1) - 1] ?? 0))
      await new Promise((r) => setTimeout(r, wait))
      q.jobs.unshift(...again)
    }
  }
  q.running = false
  schedulePrune(q)
}

/** Steps pruned in bulk once commits go quiet (or this many are waiting): removing a directory is the costliest file operation here. */
const PRUNE_IDLE_MS = 1000
const PRUNE_MAX_WAITING = 256

/**
 * Drop committed journal steps (each agent's latest stays: the next hold reads it) when the
 * workspace has been quiet for a second, or when many wait: never beside a burst of requests.
 */
function schedulePrune(q: Queue): void {
  if (q.prune.size === 0) return
  clearTimeout(q.pruneTimer)
  const run = (): void => {
    const todo = [...q.prune]
    q.prune.clear()
    q.unpruned = 0
    void (async () => {
      // A failed prune only leaves committed steps in the journal; the next prune or start removes them.
      for (const [agent, n] of todo) await pruneJournal(q.ws.agentJournal(agent), n).catch(() => undefined)
    })()
  }
  if (q.unpruned >= PRUNE_MAX_WAITING) run()
  else q.pruneTimer = setTimeout(run, PRUNE_IDLE_MS)
}

if (parentPort) {
  const port = parentPort
  const queues = new Map<string, Queue>()
  const reply: Reply = (r) => port.postMessage(r)
  port.on('message', (m: CommitRequest) => {
    if (m.kind === 'finish') {
      // Written at once, never queued behind commits: the step's commit waits for this.
      try {
        reply({ id: m.id, meta: completeFinish(m.job) })
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
          prune: new Map(),
          unpruned: 0,
        }),
      )
    q.jobs.push(m)
    if (!q.running) void drain(q, reply)
  })
}
