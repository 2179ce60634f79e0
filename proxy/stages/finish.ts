/**
 * finish (DESIGN §5.8): the meta's answer half as the forward knows it, then the commit worker
 * decodes the answer, reads usage and prices it (record/finish, off this thread), and the step's
 * queued commit goes with what it holds. Invariant: the answer is read by the worker from the
 * journal (no copy crosses threads); a finish that fails still commits the step, with the meta as
 * the forward knew it and the answer's bytes as they came (`response.txt`).
 */
import type { CommitJob, StepMeta } from '../record'
import { answeredMeta } from '../record'
import type { AnswerBytes, Finished, FinishSummary } from '../record/finish'
import type { ServerContext } from '../context'
import type { Forwarded } from './forward'
import type { Recorded } from './record'

/** The step's commit as it stands when nothing better is known: the meta so far, the answer raw. */
export function fallbackCommit(step: Recorded, meta: StepMeta, answer: AnswerBytes | null): CommitJob {
  const finished: Finished = { meta, response: answer ? { file: 'response.txt', bytes: answer } : null }
  return {
    agent: step.agent.name,
    n: step.n,
    model: step.meta.route.model,
    request: step.entry.place,
    finished,
  }
}

/**
 * Finish step `step` with what the forward learned: the committer reads the rest from the journal
 * (the send half, the answer, its HEAD) and keeps the finished half for the commit; what comes back
 * is the little the server logs and tells the plugins.
 */
export async function finish(ctx: ServerContext, step: Recorded, f: Forwarded): Promise<FinishSummary> {
  ctx.records.answered(step.agent, step.n, f.status ?? undefined)
  const answer: AnswerBytes | null =
    f.status === null
      ? null
      : f.streamed
        ? { file: step.entry.place.file, extents: step.entry.place.chunks }
        : { bytes: f.body }
  const { headers, body: _body, streamed, ...rest } = f
  try {
    const summary = await ctx.committer.finish({
      dialect: step.request.dialect.name,
      place: step.entry.place,
      // The HEAD frame in the journal holds the headers of a streamed answer; else they travel.
      answered: streamed ? rest : { ...rest, headers },
      ...(streamed ? {} : { answer }),
      prices: ctx.config.prices,
    })
    // The committer kept the finished half: the commit goes without it (nothing crosses threads twice).
    const { finished: _kept, ...job } = fallbackCommit(step, step.meta, answer)
    step.settle(job)
    return summary
  } catch (err) {
    step.settle(fallbackCommit(step, answeredMeta(step.meta, f), answer))
    throw err
  }
}
