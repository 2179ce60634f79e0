/**
 * V8's sampling heap profiler on this thread, objects already collected counted too: the heap a
 * piece of work allocates per unit, by the sites that allocated most. Used by bench/commit.ts
 * (`HOLDFAST_BENCH_HEAP=1`) and bench/heap-preload.ts (in holdfast's server thread). `minor: false`
 * leaves out what a scavenge freed (what is left outlived one: live, or promoted and freed by a
 * full collection); `major: false` also what a full collection freed.
 */
import inspector from 'node:inspector'
import path from 'node:path'

/**
 * Start sampling this thread's allocations; the function given back stops and reports them per
 * `unit` (`n` of them were made meanwhile), by the sites that allocated most.
 */
export async function sampling({ minor = true, major = true } = {}): Promise<
  (n: number, unit: string) => Promise<string>
> {
  const session = new inspector.Session()
  session.connect()
  const post = <T>(method: string, params?: object): Promise<T> =>
    new Promise((resolve, reject) =>
      session.post(method, params, (err, v) => (err ? reject(err) : resolve(v as T))),
    )
  await post('HeapProfiler.enable')
  await post('HeapProfiler.startSampling', {
    samplingInterval: 512,
    includeObjectsCollectedByMajorGC: major,
    includeObjectsCollectedByMinorGC: minor,
  })
  return async (count, unit) => {
    const { profile } = await post<{ profile: { head: Sample } }>('HeapProfiler.stopSampling')
    session.disconnect()
    const bySite = new Map<string, number>()
    let total = 0
    const walk = (n: Sample, caller: string): void => {
      const site = `${n.callFrame.functionName || '(anonymous)'} ${path.basename(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`
      total += n.selfSize
      // A builtin (slice, from, …) is named with the function that called it.
      const key = n.callFrame.url ? site : `${site} in ${caller}`
      if (n.selfSize > 0) bySite.set(key, (bySite.get(key) ?? 0) + n.selfSize)
      for (const c of n.children) walk(c, n.callFrame.url ? site : caller)
    }
    walk(profile.head, '(root)')
    const kb = (bytes: number): string => (bytes / 1024 / count).toFixed(1)
    const top = [...bySite]
      .sort((a, b) => b[1] - a[1])
      .slice(0, minor ? 6 : 12)
      .map(([k, v]) => `  ${kb(v)} KB ${k}\n`)
    const what = minor
      ? 'heap allocated'
      : major
        ? 'heap allocated that no scavenge freed'
        : 'heap allocated and not yet collected'
    return `${what}: ${kb(total)} KB per ${unit}, most by:\n${top.join('')}`
  }
}

interface Sample {
  callFrame: { functionName: string; url: string; lineNumber: number }
  selfSize: number
  children: Sample[]
}
