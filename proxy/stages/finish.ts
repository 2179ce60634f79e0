/**
 * finish (DESIGN §5.8): the meta's answer half as the forward knows it, then the commit worker
 * decodes the answer, reads usage, prices it and writes the finish half (record/finish, off this
 * thread); the step's queued commit follows once the pipeline releases it. Invariant: a streamed
 * answer is read by the worker from the journal's copy (no second copy crosses threads).
 */
import { answeredMeta, headerText, type StepMeta } from '../record'
import type { ServerContext } from '../context'
import type { Forwarded } from './forward'
import type { Recorded } from './record'

export async function finish(ctx: ServerContext, step: Recorded, f: Forwarded): Promise<StepMeta> {
  ctx.records.answered(step.agent, step.n, f.status ?? undefined)
  return ctx.committer.finish({
    dir: step.agent.stepDir(step.n),
    dialect: step.request.dialect.name,
    meta: answeredMeta(step.meta, f),
    // Streamed: the worker reads the journal's copy (nothing is cloned across threads).
    body: f.status === null || f.streamed ? null : f.body,
    contentType: headerText(f.headers['content-type']),
    contentEncoding: headerText(f.headers['content-encoding']),
    holdApplied: step.held.verdict.applied,
    prices: ctx.config.prices,
    streamed: f.streamed,
  })
}
