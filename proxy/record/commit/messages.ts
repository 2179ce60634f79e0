/**
 * What the server and the commit worker say to each other (record/commit/committer sends, the
 * worker answers): requests, replies, what the worker starts with, and what it reports (its memory,
 * its faults, a scheduled merge that failed). Invariant: every request is answered once, by its id;
 * what the worker does unasked carries the id SCHEDULED, which no request has. Types only, and
 * the one constant.
 */
import type { CommitJob } from './job'
import type { FinishSummary } from '../finish'

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
  /** Something the worker did on its own that the server's log says (a scheduled merge that failed). */
  | { id: typeof SCHEDULED; notice: MaintainNotice }
/** The id of what the worker does unasked (a scheduled merge): no request waits for it. */
export const SCHEDULED = -1
/** A scheduled merge of a workspace's packs failed, and why (its packs stay as they are). */
export interface MaintainNotice {
  home: string
  ws: string
  error: string
}
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
