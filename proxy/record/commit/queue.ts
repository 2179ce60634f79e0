/**
 * The commit worker's queue policy, as pure functions (record/commit/worker runs them on its
 * thread, with the files and the clock): when a batch starts (a gathering window), what one batch
 * takes (consecutive commits, bounded in steps and bytes; a stalled agent's step refused; a journal
 * that cannot be read now ends the batch there), what becomes of each step after its batch
 * (committed, again, or given up), and how long a fault is waited out before the next try.
 * Invariant: an agent's steps leave the queue in the order they came, and a step is answered once:
 * committed, refused, or given up; a step that goes again goes first. An empty queue takes an empty
 * batch.
 */
import { isTransientFault } from '../../store/faults'

/** A batch starts this long after the first job came, and under sustained load this long after the previous one. */
export const BATCH_WINDOW_MS = 20
export const BUSY_WINDOW_MS = 100
/** At most this many steps, or about this many bytes of their files, in one pack. */
export const BATCH_MAX_STEPS = 512
export const BATCH_MAX_BYTES = 8 * 1024 * 1024
/** A workspace whose commits were quiet this long gets its packs merged (when enough piled up). */
export const MAINTAIN_IDLE_MS = 2000
/** Backoff while a fault lasts; the last step repeats for as long as it does. */
export const RETRY_MS = [50, 200, 1000, 3000, 10_000, 30_000] as const

/**
 * How long to wait before the next batch (0: at once): steps that finish meanwhile share one pack
 * and one ref move per agent (docs/architecture.md, performance devices). A full batch waits for
 * nothing.
 */
export function gatherWait(at: { now: number; lastBatch: number; first: boolean; queued: number }): number {
  if (at.queued >= BATCH_MAX_STEPS) return 0
  return Math.max(0, at.lastBatch + (at.first ? BATCH_WINDOW_MS : BUSY_WINDOW_MS) - at.now)
}

/** What a queued job is, looked at by the caller (reading its files is the caller's). */
export type Look<S> =
  | { kind: 'step'; step: S; bytes: number }
  /** It is not committed now and never will be: answer it with `error`. */
  | { kind: 'refused'; error: Error }
  /** It cannot be read right now (a transient fault): it and everything after it wait. */
  | { kind: 'wait' }

/**
 * Take one batch off the front of `queue` (in place): the consecutive jobs `isCommit` says are
 * commits, until BATCH_MAX_STEPS steps or BATCH_MAX_BYTES bytes are taken. A job `look` refuses is
 * taken off and returned among `refused`; one it says must wait stays first and ends the batch.
 * A backlog is committed in bounded batches: one pack of thousands of steps held every file of
 * every step in memory at once.
 */
export function takeBatch<J, S>(
  queue: J[],
  isCommit: (job: J) => boolean,
  look: (job: J) => Look<S>,
): { batch: { job: J; step: S }[]; refused: { job: J; error: Error }[]; waiting: boolean } {
  const batch: { job: J; step: S }[] = []
  const refused: { job: J; error: Error }[] = []
  let bytes = 0
  while (
    queue.length > 0 &&
    isCommit(queue[0] as J) &&
    batch.length < BATCH_MAX_STEPS &&
    bytes < BATCH_MAX_BYTES
  ) {
    const job = queue[0] as J
    const l = look(job)
    if (l.kind === 'wait') return { batch, refused, waiting: true }
    queue.shift()
    if (l.kind === 'refused') refused.push({ job, error: l.error })
    else {
      bytes += l.bytes
      batch.push({ job, step: l.step })
    }
  }
  return { batch, refused, waiting: false }
}

/**
 * What becomes of a step after its batch: committed (no failure, its agent not stalled); again,
 * first, after a backoff (its branch could not move for a reason that passes: locked, moved under
 * us, a full disk); or given up (anything else: its agent's later steps must not be committed
 * before it).
 */
export function afterBatch(failure: unknown, agentStalled: boolean): 'committed' | 'again' | 'given-up' {
  if (failure === undefined && !agentStalled) return 'committed'
  if (!agentStalled && isTransientFault(failure)) return 'again'
  return 'given-up'
}

/** A fault being waited out: since when, the last error, and how many tries it cost. */
export interface Fault {
  since: string
  error: string
  attempts: number
}

/** The fault after one more failed try (`now` an ISO time), and how long to wait before the next. */
export function nextTry(
  fault: Fault | undefined,
  err: unknown,
  now: string,
): { fault: Fault; waitMs: number } {
  const attempts = (fault?.attempts ?? 0) + 1
  return {
    fault: { since: fault?.since ?? now, error: (err as Error)?.message ?? String(err), attempts },
    waitMs: RETRY_MS[Math.min(attempts, RETRY_MS.length) - 1] as number,
  }
}

/** Whether enough step commits piled up since the last merge for the next quiet moment to merge packs. */
export function maintainDue(sinceMaintain: number, maintainAfter: number): boolean {
  return maintainAfter > 0 && sinceMaintain >= maintainAfter
}
