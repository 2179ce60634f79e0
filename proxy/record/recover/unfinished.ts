/**
 * What a journal step a crash left uncommitted becomes at recovery, from what reached the journal:
 * an answer whose completion marker was written is finished as the commit worker would have (it
 * was delivered); one cut off is `interrupted`, its bytes kept as `response.txt`; a step recorded
 * but never sent is `not_sent`; a step whose answer the journal holds damaged keeps its request
 * and says where the damaged bytes went. Invariant: every step above the branch's is finished,
 * none is dropped, and the numbers the journal gave out without a record are named (gaps). Pure:
 * the journal is read by the caller.
 */
import path from 'node:path'
import { RESPONSE_TEXT } from '../../core/layout'
import type { HoldfastConfig } from '../../store/config'
import type { CommitJob } from '../commit/job'
import { finishStep, type Finished } from '../finish'
import { FRAME } from '../journal/format'
import type { Damage, JournalRead, JournalStep } from '../journal/reader'
import type { StepMeta } from '../meta'

/**
 * The finished record of a step a crash left uncommitted, from what reached the journal. A step
 * that cannot be finished (its send half is not a meta this version reads) is kept as the journal
 * has it, with the reason.
 */
export function finishUnfinished(step: JournalStep, priceTable: HoldfastConfig['prices']): Finished {
  const { meta, head, answer } = step
  if (step.damaged) return damagedStep(step, step.damaged)
  if (head && answer.length === head.bytes) {
    try {
      return finishStep({
        dialect: meta.dialect,
        meta,
        answered: {
          outcome: head.status >= 400 ? 'upstream_error' : 'ok',
          status: head.status,
          headers: head.headers,
          ttfbMs: head.ttfb_ms,
          totalMs: head.total_ms,
          error: null,
          endedAt: head.ended_at,
        },
        answer: { bytes: answer },
        prices: priceTable,
      })
    } catch (err) {
      return asJournaled(step, `this step could not be finished at recovery: ${(err as Error).message}`)
    }
  }
  const cutOff = answer.length > 0
  const done: StepMeta = {
    ...meta,
    ended_at: new Date().toISOString(),
    status: null,
    outcome: step.sent ? 'interrupted' : 'not_sent',
    response_file: cutOff ? RESPONSE_TEXT : null,
    usage: null,
    cost: null,
    stop_reason: null,
    error: step.sent
      ? {
          code: 'INTERRUPTED',
          message: cutOff
            ? `holdfast stopped after ${answer.length} bytes of the answer (kept raw in response.txt); recovered at the next start`
            : 'holdfast stopped before this step finished; recovered at the next start',
        }
      : {
          code: 'NOT_SENT',
          message:
            'holdfast stopped after recording this step and before sending it; the provider never saw it',
        },
  }
  return { meta: done, response: cutOff ? { file: RESPONSE_TEXT, bytes: { bytes: answer } } : null }
}

/** A step whose answer the journal holds damaged: its request and meta, no answer, and where the bytes went. */
function damagedStep(step: JournalStep, d: Damage): Finished {
  return {
    meta: {
      ...step.meta,
      ended_at: step.head?.ended_at ?? new Date().toISOString(),
      status: step.head?.status ?? null,
      outcome: step.sent ? 'interrupted' : 'not_sent',
      response_file: null,
      usage: null,
      cost: null,
      stop_reason: null,
      error: {
        code: 'RECORD_DAMAGED',
        message: `the journal holds part of this step's answer damaged (${d.length} bytes at ${path.basename(d.file)}@${d.offset}); the bytes are kept under quarantine/<ws>/<agent>/damaged/, the answer is not committed`,
      },
    },
    response: null,
  }
}

/** A step kept as the journal has it: its meta as journaled, with why, and its answer raw. */
function asJournaled(step: JournalStep, why: string): Finished {
  return {
    meta: { ...step.meta, error: { code: 'INTERNAL', message: why } } as StepMeta,
    response: step.answer.length > 0 ? { file: RESPONSE_TEXT, bytes: { bytes: step.answer } } : null,
  }
}

/** The commit jobs of an agent's journal steps above `committed`, in step order. */
export function pendingJobs(
  agent: string,
  read: JournalRead,
  committed: number,
  priceTable: HoldfastConfig['prices'],
): CommitJob[] {
  const jobs: CommitJob[] = []
  for (const [n, s] of read.steps) {
    if (n <= committed) continue
    jobs.push({
      agent,
      n,
      model: typeof s.meta.route?.model === 'string' ? s.meta.route.model : null,
      request: s.place,
      finished: finishUnfinished(s, priceTable),
    })
  }
  return jobs
}

/** The numbers above `committed` the journal gave out but holds no record of (a damaged send half). */
export function gapsOf(agent: string, read: JournalRead, committed: number): { agent: string; n: number }[] {
  const gaps: { agent: string; n: number }[] = []
  for (const d of read.damage)
    if (d.type === FRAME.SEND && d.step !== undefined && d.step > committed && !read.steps.has(d.step))
      gaps.push({ agent, n: d.step })
  return gaps
}
