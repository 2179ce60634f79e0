/**
 * The record (DESIGN §2, §5): one home for everything about a step's record — the send half
 * written before the send, the previous record the hold reads, the answer teed into the journal as
 * it streams, the finish half, the meta builders, what a commit holds, recovery, and the step reads
 * of the CLI. Data: each agent's journal (`<home>/workspaces/<ws>/journal/<agent>/`, record/journal)
 * until a step is committed, then the agent's branch. Invariant: nothing is sent that is not
 * recorded; a record that cannot be written refuses the step (RECORD_WRITE_FAILED).
 */
import path from 'node:path'
import { HoldfastError } from '../core/errors'
import { type PreviousStep, RecordFault } from '../core/hold'
import { formatStep } from '../core/naming'
import { recordParser } from '../core/record'
import type { ScannedTop } from '../core/json-scan'
import type { Dialect } from '../core/dialect'
import type { Workspace } from '../store/workspace'
import { Journal, type JournalEntry } from './journal/writer'
import { type StepPlace } from './journal/format'
import { readJournal, readPlaced } from './journal/reader'
import { META_FILE, REQUEST_FILE } from '../core/layout'
import type { StepMeta } from './meta'
import { PreviousRecords } from './previous'
import { committedKind, readCommittedFile } from './read'

export {
  answeredMeta,
  type Answered,
  headerText,
  type Outcome,
  sendMeta,
  type SendFacts,
  type StepMeta,
} from './meta'
export type { JournalEntry } from './journal/writer'
export { DEFAULT_RESERVE_BYTES } from './journal/reserve'
export type { CommitJob } from './commit/job'

/** What the record reads of an agent (live/agents' AgentState is one): record/ stands below it. */
export interface RecordedAgent {
  /** Its key among all a server has seen (`<ws>\0<agent>`). */
  readonly key: string
  readonly ws: Workspace
  readonly name: string
  /** The highest step on its branch. */
  readonly committed: number
  readonly journalDir: string
}

export class Records {
  /** The agents' previous requests, within holdfast.yaml `limits.previous_cache_bytes`. */
  readonly previousRecords: PreviousRecords
  readonly journal: Journal
  /** Where each agent's uncommitted steps are in its journal (a kept copy may have been dropped). */
  private readonly placed = new Map<string, Map<number, { place: StepPlace; meta: StepMeta }>>()

  constructor(
    previousBudget: number,
    /** holdfast.yaml `journal.fsync`: records and answers are flushed to the disk before they count. */
    readonly fsync: boolean,
    /** holdfast.yaml `journal.reserve_bytes`: room each workspace's journal keeps for answers under way. */
    reserveBytes = 0,
  ) {
    this.previousRecords = new PreviousRecords(previousBudget)
    this.journal = new Journal(fsync, reserveBytes)
  }

  /**
   * The record before step `n` of `agent`, for the hold: the kept copy, else the journal's (not
   * committed yet), else the agent's branch. Undefined when there is none; a RecordFault when it
   * cannot be read back as a request (the step then goes as composed).
   */
  async previous(
    agent: RecordedAgent,
    n: number,
    dialect: Dialect,
  ): Promise<PreviousStep | RecordFault | undefined> {
    if (n <= 1) return undefined
    const kept = this.previousRecords.get(agent.key, n - 1)
    if (kept) return kept
    const where = `step ${formatStep(n - 1)} of ${agent.name}`
    let bytes: Buffer | undefined
    let meta: StepMeta | undefined
    const placed = this.placed.get(agent.key)?.get(n - 1)
    try {
      if (placed) {
        bytes = readPlaced(placed.place.file, [placed.place.request])
        meta = placed.meta
      } else {
        bytes = await readCommittedFile(agent.ws, agent.name, n - 1, REQUEST_FILE)
        const m = bytes && (await readCommittedFile(agent.ws, agent.name, n - 1, META_FILE))
        meta = m ? (JSON.parse(m.toString('utf8')) as StepMeta) : undefined
        if (!bytes && n - 1 > agent.committed) {
          // Not committed yet and not written by this serve: a step a fault kept in the journal.
          const left = readJournal(agent.journalDir).steps.get(n - 1)
          bytes = left?.request
          meta = left?.meta
        }
      }
    } catch (err) {
      return new RecordFault(`${where}'s request.json`, (err as Error).message)
    }
    // A WebSocket frame that was no request (binary, not JSON, another type) is no previous request.
    if (meta?.websocket?.kind === 'other') return undefined
    if (!bytes) {
      // A directory where the request should be is a broken record, not a missing one.
      if (!placed && (await committedKind(agent.ws, agent.name, n - 1, REQUEST_FILE)) === 'tree')
        return new RecordFault(`${where}'s request.json`, 'it is a directory, not a file')
      return undefined
    }
    let parsed
    try {
      parsed = recordParser(dialect)(bytes, `${where}'s request.json`)
    } catch (err) {
      return err as RecordFault
    }
    return this.previousRecords.remember(agent.key, n - 1, {
      path: `${where}'s request.json`,
      bytes,
      parsed,
      sentAt: meta ? Date.parse(meta.started_at) : Date.now(),
      headers: meta?.cache_keying_headers ?? {},
      status: meta?.status ?? undefined,
    })
  }

  /**
   * Write step `n`'s send half (its meta, then the exact bytes to send, in one journal frame) and
   * keep the request as the agent's next previous. Throws RECORD_WRITE_FAILED when it cannot.
   */
  writeSend(
    agent: RecordedAgent,
    n: number,
    bytes: Buffer,
    parsed: PreviousStep['parsed'],
    meta: StepMeta,
    /** scanTopLevel(bytes) when the caller has it (the client's body sent as it came). */
    top?: ScannedTop,
    /** The exact bytes sent upstream when they are not `bytes` (a WebSocket frame). */
    wire?: Buffer,
  ): JournalEntry {
    let entry: JournalEntry
    try {
      entry = this.journal.agent(agent.journalDir).send(n, meta, bytes, wire)
    } catch (err) {
      throw new HoldfastError(
        'RECORD_WRITE_FAILED',
        `the record of step ${formatStep(n)} could not be written; nothing was sent`,
        { cause: err },
      )
    }
    let placed = this.placed.get(agent.key)
    if (!placed) this.placed.set(agent.key, (placed = new Map()))
    placed.set(n, { place: entry.place, meta })
    if (meta.websocket?.kind === 'other') return entry
    this.previousRecords.remember(agent.key, n, {
      path: path.join(agent.journalDir, `step ${formatStep(n)}`),
      bytes,
      parsed,
      sentAt: Date.parse(meta.started_at),
      headers: meta.cache_keying_headers,
      top,
    })
    return entry
  }

  /** The provider answered step `n` with `status` (the hold refuses to hold after a 4xx). */
  answered(agent: RecordedAgent, n: number, status: number | undefined): void {
    this.previousRecords.answered(agent.key, n, status)
  }

  /** Steps up to `n` of `agent` are committed: their journal files can go. */
  committed(agent: RecordedAgent, n: number): void {
    const placed = this.placed.get(agent.key)
    if (placed) {
      for (const k of placed.keys()) if (k <= n) placed.delete(k)
      if (placed.size === 0) this.placed.delete(agent.key)
    }
    this.journal.agent(agent.journalDir).committed(n)
  }

  /** Forget what is kept of an idle agent (its journal's open files, places, previous request). */
  forget(agent: RecordedAgent): void {
    this.placed.delete(agent.key)
    this.previousRecords.forget(agent.key)
    this.journal.forget(agent.journalDir, agent.committed)
  }

  close(): void {
    this.journal.close()
  }
}
