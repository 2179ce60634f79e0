/**
 * Live pages: a server-sent event stream per open page that, when a step of its workspace is
 * committed (the `holdfast.step.committed` channel the server context publishes), renders the
 * page's changed regions on the server and sends them (`event: regions`, `{replace, upsert}` as
 * markup), so the page grows without a reload. Invariant: at most one render runs per stream, and
 * events that arrive during it are folded into one more; a closed stream unsubscribes at once.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import type http from 'node:http'
import type { StepCommitted } from '../live/context'

export interface Regions {
  /** Element id → its new inner markup. */
  replace?: Record<string, string>
  /** Container id → rows (elements with ids) that replace their namesakes or are appended. */
  upsert?: Record<string, string>
  after?: number
}

const CHANNEL = 'holdfast.step.committed'
const PING_MS = 20_000

/**
 * Answer with an event stream that calls `render` now and whenever `wants(event)` says a committed
 * step concerns the page; each render that returns regions is sent.
 */
export function liveStream(
  home: string,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  wants: (e: StepCommitted) => boolean,
  render: () => Promise<Regions | undefined>,
  onError: (err: unknown) => void,
): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  })
  res.write('retry: 2000\n\n')
  let running = false
  let again = false
  let closed = false
  const run = async (): Promise<void> => {
    if (running) {
      again = true
      return
    }
    running = true
    try {
      do {
        again = false
        const regions = await render()
        if (regions && !closed) res.write(`event: regions\ndata: ${JSON.stringify(regions)}\n\n`)
      } while (again && !closed)
    } catch (err) {
      onError(err)
    } finally {
      running = false
    }
  }
  const onMessage = (message: unknown): void => {
    const e = message as StepCommitted
    if (!closed && e.home === home && wants(e)) void run()
  }
  subscribe(CHANNEL, onMessage)
  const ping = setInterval(() => res.write(': ping\n\n'), PING_MS)
  const close = (): void => {
    if (closed) return
    closed = true
    clearInterval(ping)
    unsubscribe(CHANNEL, onMessage)
  }
  req.on('close', close)
  res.on('close', close)
  void run()
}
