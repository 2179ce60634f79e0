/**
 * The abort wiring of one forward (as undici's `abort-signal.js` is to its handlers): one signal
 * for the provider call, aborted when the client goes away before its answer is finished or when
 * shutdown stops waiting, and `cut` saying which came first. Invariant: the first cause wins and is
 * never replaced; a cause already there when the forward starts (shutdown stopping, the client's
 * socket gone) is the cut at once; `dispose()` removes every listener it added.
 */
import type { EventEmitter } from 'node:events'

/** What cut a forward short: the client went away, or shutdown stopped waiting. */
export type Cut = 'client' | 'shutdown'

/** The client's side as the wiring sees it (a ServerResponse). */
export interface ClientSide extends Pick<EventEmitter, 'on' | 'off'> {
  readonly writableFinished: boolean
  readonly destroyed: boolean
}

export interface ForwardAbort {
  /** Aborts the provider call. */
  readonly signal: AbortSignal
  /** Why it was aborted; undefined while it was not. */
  readonly cut: Cut | undefined
  dispose(): void
}

/** Wire `res` and `shutdown` to one abort signal for the provider call. */
export function forwardAbort(res: ClientSide, shutdown: AbortSignal): ForwardAbort {
  const ac = new AbortController()
  let cut: Cut | undefined
  const abort = (why: Cut): void => {
    if (cut) return
    cut = why
    ac.abort(why === 'shutdown' ? SHUTDOWN : CLIENT_GONE)
  }
  // A socket that closes after the whole answer was written is a finished exchange, not a cut.
  const onClose = (): void => {
    if (!res.writableFinished) abort('client')
  }
  const onShutdown = (): void => abort('shutdown')
  if (shutdown.aborted) abort('shutdown')
  else if (res.destroyed && !res.writableFinished) abort('client')
  res.on('close', onClose)
  shutdown.addEventListener('abort', onShutdown)
  return {
    signal: ac.signal,
    get cut() {
      return cut
    },
    dispose() {
      res.off('close', onClose)
      shutdown.removeEventListener('abort', onShutdown)
    },
  }
}

/** The abort reasons, told apart by `cut`; kept as errors so what rejects with them reads as one. */
const SHUTDOWN = new Error('holdfast stopped waiting at shutdown')
const CLIENT_GONE = new Error('the client went away')
