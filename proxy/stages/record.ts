/**
 * record (DESIGN §5.6): step `n`'s send half — `request.json` (the exact bytes to send) and the
 * send half of `meta.json` — written into the journal before anything is sent, and the step's
 * commit queued behind the agent's earlier ones (it goes once finish has run). Invariant: runs in
 * the agent's critical section (pipeline), so numbers are contiguous and commits chained in order.
 */
import type { Identified } from '../../plugins/runner'
import type { AgentState } from '../live/agents'
import type { ServerContext } from '../live/context'
import { type CommitJob, type JournalEntry, sendMeta, type StepMeta } from '../record'
import type { FinishSummary } from '../record/finish'
import type { Accepted } from './accept'
import type { Held } from './hold'
import type { Route } from './resolve'

/**
 * One step as the stages before record made it, the one value passed on: the request as accepted,
 * who it is for, where it goes, and exactly what goes (a `count_tokens` call is forwarded as this).
 */
export interface Exchange {
  request: Accepted
  who: Identified
  route: Route
  held: Held
}

/** record's value: the step, recorded and numbered, with everything forward and finish need. */
export interface Recorded extends Exchange {
  n: number
  workspace: string
  agent: AgentState
  /** The send half, then (after finish) the whole meta. */
  meta: StepMeta
  /** Where the step's frames go in the journal (the answer's, as it streams). */
  entry: JournalEntry
  /**
   * Lets the queued commit go: called once, by finish with how the forward went (or by the
   * pipeline when the forward itself failed).
   */
  settle: (job: CommitJob) => void
  /** The finish's summary (usage, cost: what the log line and the plugins hear), once made. */
  summary: Promise<FinishSummary>
  /** The step's commit once on its branch (undefined: its commit failed). */
  landed: Promise<string | undefined>
}

/** The prompt cache key a body carries in its dialect's field, when it is a string. */
function promptCacheKeyOf(dialect: Accepted['dialect'], body: Held['parsed']): string | undefined {
  const field = dialect.promptCacheKeyField
  const v = field === undefined ? undefined : body[field]
  return typeof v === 'string' ? v : undefined
}

/**
 * Record `step` as step `n` of `agent` (inside the agent's critical section). `frame`: a WebSocket
 * frame's bytes as sent upstream and its facts (proxy/socket); request.json is then the whole conversation.
 */
export function record(
  ctx: ServerContext,
  step: Exchange,
  agent: AgentState,
  n: number,
  frame?: { bytes?: Buffer; meta: NonNullable<StepMeta['websocket']> },
): Recorded {
  const { request, who, route, held } = step
  const meta = sendMeta({
    workspace: who.workspace,
    agent: who.agent,
    n,
    dialect: request.dialect.name,
    path: request.path,
    route,
    identified: who.moved,
    compaction: who.compaction,
    promptCacheKey: promptCacheKeyOf(request.dialect, held.parsed),
    model: typeof held.parsed.model === 'string' ? held.parsed.model : null,
    requestHeaders: request.recordedHeaders(),
    keyingHeaders: held.keyingHeaders,
    hold: held.verdict,
    ...(held.clientTools ? { clientTools: held.clientTools } : {}),
    providerCache: request.dialect.cacheComparison?.of(held.parsed) ?? { asked: false, comparedWith: null },
    injected: held.injected,
    harnessTools: held.harnessTools,
    changes: held.changes,
    requestBytes: held.bytes.length,
    websocket: frame?.meta,
  })
  if (request.read) ctx.reads.numbered(request.read, n)
  // A body sent as composed comes with its scan: the kept copy needs no scan of its own.
  const entry = ctx.records.writeSend(agent, n, held.bytes, held.parsed, meta, held.top, frame?.bytes)
  let settle!: (job: CommitJob) => void
  const job = new Promise<CommitJob>((resolve) => (settle = resolve))
  let summed!: (s: FinishSummary) => void
  const summed_ = new Promise<FinishSummary>((resolve) => (summed = resolve))
  // Queued inside the lock, so commits are chained in step order.
  const landed = agent.queueCommit(n, job, summed)
  // A commit that fails before its finish was summed up (the agent stalled) says so instead.
  const summary = Promise.race([
    summed_,
    landed.then(() =>
      Promise.reject(
        new Error(`step ${meta.step} was not finished: ${agent.stalled?.message ?? 'its commit failed'}`),
      ),
    ),
  ])
  const warm = { ws: who.workspace, agent: agent.name, n }
  ctx.keepWarm?.started(warm.ws, warm.agent)
  summary.then(
    (s) => {
      if (s.answer_id && (agent.lastAnswer?.n ?? 0) < n) agent.lastAnswer = { n, id: s.answer_id }
      const ok = s.status !== null && s.status < 400 && s.usage
      ctx.keepWarm?.settled(
        warm,
        ok && s.usage ? s.usage.cache_read_tokens + s.usage.cache_write_tokens : null,
      )
    },
    () => ctx.keepWarm?.settled(warm, null),
  )
  // After the reaction above: whoever waits on it finds lastAnswer set.
  agent.lastFinish = summary.catch(() => undefined)
  return { ...step, n, workspace: who.workspace, agent, meta, entry, settle, summary, landed }
}
