/**
 * `holdfast export --otlp`: already-recorded steps sent as spans, with their recorded times, so a
 * team can load its history into the tracing engine it runs (docs/telemetry.md). Read from git
 * (committed steps only: a pending one is exported by the serve that finishes it); each span is
 * the one the serve would have made (proxy/record/span.ts) from the step's meta.json and its
 * request's sampling parameters, with its commit. Invariant: nothing is written to the home; no
 * prompt or answer text is read or sent; a step whose record cannot be read is skipped and counted.
 */
import { dialectByName } from '../dialects'
import { readStepMeta, readStepRequest } from '../record/read'
import { requestParams, spanFacts, type SpanFacts } from '../record/span'
import { agentsOf, existingAgent, existingWorkspace, listSteps } from '../report/lookup'
import { notchCommit } from '../report/notch'

/** What a backfill sends its spans to (a Telemetry). */
export interface SpanSink {
  emit(facts: SpanFacts, commit?: string): void
  flush(): Promise<void>
}

export interface Backfilled {
  /** Spans handed to the exporter. */
  sent: number
  /** Committed steps whose record could not be read (or that never finished). */
  skipped: number
}

/** Spans handed over between flushes: well under the batch processor's queue. */
const FLUSH_EVERY = 256

export async function backfillSpans(
  home: string,
  wsName: string,
  agent: string | undefined,
  sink: SpanSink,
  semconv: 'stable' | 'latest',
  progress: (done: number, agent: string) => void = () => undefined,
): Promise<Backfilled> {
  const ws = await existingWorkspace(home, wsName)
  const agents = agent === undefined ? await agentsOf(ws) : [await existingAgent(ws, agent)]
  const out: Backfilled = { sent: 0, skipped: 0 }
  for (const name of agents) {
    for (const ref of await listSteps(ws, name)) {
      if (!ref.committed) continue
      const meta = await readStepMeta(ws, name, ref.n).catch(() => undefined)
      const request = meta && (await readStepRequest(ws, name, ref.n).catch(() => undefined))
      if (!meta || !request || meta.ended_at === undefined) {
        out.skipped++
        continue
      }
      const provider = dialectByName(meta.dialect).rows.name
      const facts = spanFacts(meta, provider, {
        capture: false,
        semconv,
        acceptedAt: Date.parse(meta.started_at),
        request: requestParams(request.body),
      })
      sink.emit(facts, await notchCommit(ws, name, ref.n))
      out.sent++
      if (out.sent % FLUSH_EVERY === 0) await sink.flush()
      progress(out.sent, name)
    }
  }
  return out
}
