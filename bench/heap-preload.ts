/**
 * The heap holdfast's server thread allocates per request, by the sites that allocated most: loaded
 * into holdfast with `HOLDFAST_NODE_ARGS="-r ./scripts/register.js -r ./bench/heap-preload.ts"`
 * (bench/profile.ts passes node flags on), it starts V8's sampling heap profiler after
 * `HOLDFAST_HEAP_AFTER` requests (default 2500: past a bench's warm-up), stops it
 * `HOLDFAST_HEAP_FOR` requests later (default 1000) and prints the figures on holdfast's stderr.
 * `HOLDFAST_HEAP_SURVIVED=1`: only what no scavenge freed; `HOLDFAST_HEAP_LIVE=1`: only what no
 * collection freed until then (bench/heap.ts). Only in the server thread (the commit worker
 * inherits node's flags). Asserts nothing.
 */
import diagnostics from 'node:diagnostics_channel'
import { isMainThread } from 'node:worker_threads'
import { sampling } from './heap'

if (isMainThread) {
  const after = Number(process.env.HOLDFAST_HEAP_AFTER ?? 2500)
  const span = Number(process.env.HOLDFAST_HEAP_FOR ?? 1000)
  let requests = 0
  let stop: Promise<(count: number, unit: string) => Promise<string>> | undefined
  diagnostics.subscribe('http.server.request.start', () => {
    requests++
    if (requests === after)
      stop = sampling({
        minor: !process.env.HOLDFAST_HEAP_LIVE && !process.env.HOLDFAST_HEAP_SURVIVED,
        major: !process.env.HOLDFAST_HEAP_LIVE,
      })
    if (requests === after + span && stop)
      void stop
        .then((report) => report(span, 'request'))
        .then((text) =>
          process.stderr.write(`holdfast server thread, requests ${after}–${after + span}: ${text}`),
        )
  })
}
