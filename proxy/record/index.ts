/**
 * The record (DESIGN §2, §5): one home for everything about a step's files — the send half written
 * before the send, the previous record the hold reads, the answer teed into the journal as it
 * streams, the finish half, the meta builders, recovery, and the step reads of the CLI. Data:
 * the journal `<home>/workspaces/<ws>/steps/<agent>/<NNN>/` until a step is committed, then the
 * agent's branch. Invariant: nothing is sent that is not recorded; a record that cannot be written
 * refuses the step (RECORD_WRITE_FAILED) and leaves no directory behind.
 */
import fs from 'node:fs'
import path from 'node:path'
import { HoldfastError } from '../core/errors'
import type { PreviousStep, RecordFault } from '../core/hold'
import { formatStep } from '../core/naming'
import type { Dialect } from '../dialects/types'
import type { AgentState } from '../agents'
import { REQUEST_FILE, ResponseTee, writeRecord } from './journal'
import type { StepMeta } from './meta'
import { PreviousRecords } from './previous'

export {
  answeredMeta,
  type Answered,
  headerText,
  type Outcome,
  sendMeta,
  type SendFacts,
  type StepMeta,
} from './meta'

export class Records {
  /** The agents' previous requests, within holdfast.yaml `limits.previous_cache_bytes`. */
  readonly previousRecords: PreviousRecords

  constructor(
    previousBudget: number,
    /** holdfast.yaml `journal.fsync`: records and answers are flushed to the disk before they count. */
    readonly fsync: boolean,
  ) {
    this.previousRecords = new PreviousRecords(previousBudget)
  }

  /** The record before step `n` of `agent`, for the hold (undefined: none; a RecordFault: unreadable). */
  previous(agent: AgentState, n: number, dialect: Dialect): PreviousStep | RecordFault | undefined {
    return this.previousRecords.read(agent.key, (i) => agent.stepDir(i), n, dialect)
  }

  /**
   * Write step `n`'s send half (meta first, then the exact bytes to send) and remember the request
   * as the agent's next previous. Throws RECORD_WRITE_FAILED, leaving nothing, when it cannot.
   */
  writeSend(
    agent: AgentState,
    n: number,
    bytes: Buffer,
    parsed: PreviousStep['parsed'],
    meta: StepMeta,
  ): void {
    const dir = agent.stepDir(n)
    try {
      writeRecord(dir, bytes, meta, this.fsync)
    } catch (err) {
      fs.rmSync(dir, { recursive: true, force: true })
      throw new HoldfastError(
        'RECORD_WRITE_FAILED',
        `the record of step ${formatStep(n)} could not be written; nothing was sent`,
        { cause: err },
      )
    }
    this.previousRecords.remember(agent.key, n, {
      path: path.join(dir, REQUEST_FILE),
      bytes,
      parsed,
      sentAt: Date.parse(meta.started_at),
      headers: meta.cache_keying_headers,
    })
  }

  /** Where step `n`'s answer streams into the journal as the client receives it. */
  tee(agent: AgentState, n: number): ResponseTee {
    return new ResponseTee(agent.stepDir(n), this.fsync)
  }

  /** The provider answered step `n` with `status` (the hold refuses to hold after a 4xx). */
  answered(agent: AgentState, n: number, status: number | undefined): void {
    this.previousRecords.answered(agent.key, n, status)
  }
}
