/**
 * forward (DESIGN §5.7): send what the hold decided to the provider row and stream status, headers
 * and body back unbuffered and byte for byte, a recorded step's answer teed into its journal
 * (record/journal/tee, where the write-before-the-client rule is stated). This module drives the
 * call; what each event means is stages/forward-handler's, the abort wiring stages/forward-abort's.
 * Invariant: exactly one ending event per call; a client that goes away aborts the provider call,
 * and so does a shutdown that stops waiting (the step then interrupted, `SHUTDOWN_TIMEOUT`).
 * Never throws.
 */
import type { ServerResponse } from 'node:http'
import { once } from 'node:events'
import { formatStep } from '../core/naming'
import type { ServerContext } from '../live/context'
import { JournalTee } from '../record/journal/tee'
import { forwardHeaders } from '../http/upstream'
import { type Cut, forwardAbort } from './forward-abort'
import { type Forwarded, ForwardHandler } from './forward-handler'
import type { Exchange, Recorded } from './record'

export type { Forwarded } from './forward-handler'

/** Send `step` upstream and stream the answer to `res`, teed into its journal when it is recorded. */
export async function forward(
  ctx: ServerContext,
  step: Exchange | Recorded,
  res: ServerResponse,
): Promise<Forwarded> {
  const { request, route, held } = step
  const recorded = 'entry' in step ? step : undefined
  const tee = recorded && new JournalTee(recorded.entry, (err) => teeFailed(ctx, recorded, err))
  const h = new ForwardHandler(res, request.dialect, route, tee, recorded && formatStep(recorded.n))
  const abort = forwardAbort(res, ctx.shutdown.signal)
  const cutShort = (cut: Cut, sent: boolean): void =>
    cut === 'shutdown' ? h.onShutdown(sent) : h.onClientGone()
  try {
    if (abort.cut) {
      cutShort(abort.cut, false)
      return h.done()
    }
    if (!h.onSend()) return h.done()
    let up
    try {
      const headers = forwardHeaders(request.headers, route.url, held.bytes.length, route.row, route.key)
      up = await ctx.upstream.send(route.url, 'POST', headers, held.bytes, abort.signal)
    } catch (err) {
      if (abort.cut) cutShort(abort.cut, true)
      else h.onError(err)
      return h.done()
    }
    try {
      h.onHeaders(up)
      for await (const chunk of up.body as AsyncIterable<Buffer>)
        if (!h.onChunk(chunk)) await once(res, 'drain', { signal: abort.signal })
      // undici fills the trailers in once the body has ended (none for a body of declared length).
      h.onComplete(up.trailers as Record<string, string> | undefined)
    } catch (err) {
      if (abort.cut) cutShort(abort.cut, true)
      else h.onError(err)
      up.body.destroy()
    }
    return h.done()
  } finally {
    abort.dispose()
  }
}

/** The journal refused a frame of the answer: the client still gets it; only the journal's copy is short. */
function teeFailed(ctx: ServerContext, step: Recorded, err: Error): void {
  // The answer is kept in memory for the commit; a stop before it lands loses it (said at shutdown).
  step.agent.answersInMemory.set(step.n, err.message)
  ctx.log.error(
    { ws: step.workspace, agent: step.agent.name, step: step.meta.step, err: String(err) },
    'the journal copy of an answer failed: the answer is kept in memory until its commit lands',
  )
}
