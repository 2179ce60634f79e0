/**
 * Heap snapshots of a running holdfast, every thread: loaded into holdfast with
 * `HOLDFAST_NODE_ARGS="-r ./scripts/register.js -r ./bench/snapshot-preload.ts"` and
 * `HOLDFAST_SNAPSHOT_DIR=<dir>`; each time `<dir>/take` is touched (its mtime changes), every thread
 * (the server thread and each worker: they inherit node's flags) writes its V8 heap spaces to
 * `<dir>/<thread>-<n>.json` and, unless `HOLDFAST_SNAPSHOT_SPACES_ONLY=1`, a heap snapshot to
 * `<dir>/<thread>-<n>.heapsnapshot` (read with bench/snapshot-summary.ts or Chrome's DevTools).
 * Used by bench/idle-memory.ts (`--snapshots`). Asserts nothing.
 */
import fs from 'node:fs'
import path from 'node:path'
import v8 from 'node:v8'
import { isMainThread, threadId } from 'node:worker_threads'

const dir = process.env.HOLDFAST_SNAPSHOT_DIR
if (dir) {
  const name = isMainThread ? 'server' : `worker${threadId}`
  const trigger = path.join(dir, 'take')
  let seen = fs.statSync(trigger, { throwIfNoEntry: false })?.mtimeMs ?? 0
  let n = 0
  setInterval(() => {
    const at = fs.statSync(trigger, { throwIfNoEntry: false })?.mtimeMs ?? 0
    if (at === seen) return
    seen = at
    n++
    const spaces = Object.fromEntries(
      v8.getHeapSpaceStatistics().map((s) => [s.space_name, { size: s.space_size, used: s.space_used_size }]),
    )
    fs.writeFileSync(
      path.join(dir, `${name}-${n}.json`),
      JSON.stringify({ memory: process.memoryUsage(), spaces }),
    )
    if (process.env.HOLDFAST_SNAPSHOT_SPACES_ONLY !== '1')
      v8.writeHeapSnapshot(path.join(dir, `${name}-${n}.heapsnapshot`))
  }, 250).unref()
}
