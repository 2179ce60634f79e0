/**
 * finish (DESIGN §5.8): the step's commit goes with how the forward went, as one message; the
 * commit worker decodes the answer, reads usage and prices it (record/finish, off this thread),
 * answers the summary, then commits. Invariant: the answer is read by the worker from the journal
 * (no copy crosses threads); a finish that fails still commits the step, with the meta as the
 * forward knew it and the answer's bytes as they came (`response.txt`). With telemetry on, the
 * finish also makes the step's span facts (record/span.ts) and, once the commit has landed, the
 * span is handed to the exporter (proxy/telemetry): nothing of it runs before the client's answer.
 */
import type { CommitJob } from '../record'
import type { AnswerBytes, FinishJob, FinishSummary } from '../record/finish'
import type { ServerContext } from '../live/context'
import type { Forwarded } from './forward'
import type { Recorded } from './record'
import { requestParams, type SpanAsk } from '../record/span'

/** The step's commit: where its record is, and how to finish it (the committer finishes it). */
export function commitJob(
  step: Recorded,
  f: Forwarded,
  prices: FinishJob['prices'],
  span?: SpanAsk,
): CommitJob {
  const answer: AnswerBytes | null =
    f.status === null
      ? null
      : f.streamed
        ? { file: step.entry.place.file, extents: step.entry.place.chunks }
        : { bytes: f.body }
  const { headers, body: _body, streamed, ...rest } = f
  return {
    agent: step.agent.name,
    n: step.n,
    model: step.meta.route.model,
    request: step.entry.place,
    finish: {
      dialect: step.request.dialect.name,
      place: step.entry.place,
      // The HEAD frame in the journal holds the headers of a streamed answer; else they travel.
      answered: streamed ? rest : { ...rest, headers },
      ...(streamed ? {} : { answer }),
      prices,
      ...(span ? { span } : {}),
    },
  }
}

/**
 * Finish step `step` with what the forward learned: its commit goes (one message: the committer
 * reads the rest from the journal — the send half, the answer, its HEAD — finishes and commits);
 * what comes back first is the little the server logs and tells the plugins.
 */
export function finish(ctx: ServerContext, step: Recorded, f: Forwarded): Promise<FinishSummary> {
  ctx.records.answered(step.agent, step.n, f.status ?? undefined)
  const t = ctx.telemetry
  const ask: SpanAsk | undefined = t && {
    capture: t.capture,
    semconv: t.semconv,
    acceptedAt: step.request.acceptedAt,
    request: requestParams(step.held.parsed),
    ...(step.held.moves ? { moves: step.held.moves } : {}),
  }
  step.settle(commitJob(step, f, ctx.config.prices, ask))
  if (t)
    void Promise.all([step.summary, step.landed]).then(
      ([s, commit]) => s.span && t.emit(s.span, commit),
      () => undefined, // a step whose finish never came has no span
    )
  return step.summary
}

/** When the forward itself threw (a bug): the step is committed with the send half and the error. */
export function failedForward(err: unknown): Forwarded {
  return {
    outcome: 'interrupted',
    status: null,
    headers: {},
    body: Buffer.alloc(0),
    ttfbMs: null,
    totalMs: 0,
    error: {
      code: 'INTERNAL',
      message: `forwarding this step failed: ${(err as Error)?.message ?? String(err)}`,
    },
    streamed: false,
  }
}
