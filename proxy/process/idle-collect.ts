/**
 * Memory given back when the server goes idle. V8 keeps the old-generation pages a burst of
 * requests grew until its next major collection, and an idle server allocates nothing that would
 * start one; glibc's malloc keeps what the burst freed (request bodies, journal copies, packs)
 * resident inside its heaps. So once no request has been in flight for `idleMs`, one full
 * collection runs, then `malloc_trim(0)` (proxy/process/malloc-trim); health's `idle_collection_ms` and
 * `malloc_trim_ms` say what each took. Not a compacting collection: its pause is one a step
 * arriving at that moment would wait out. What each gives back and costs, and the command that
 * measures it: docs/performance.md.
 * Invariant: at most one collection and one trim per idle period, never while a request is in
 * flight, none without a step (a request that `grows`) since the last one; `idleMs` 0: never, and
 * so no trim either. The collector is V8's own `gc`, exposed at run time when node was not started
 * with `--expose-gc`.
 */
import v8 from 'node:v8'
import vm from 'node:vm'
import { onFirstUse } from '../core/once'
import { mallocTrim } from './malloc-trim'

/** V8's full collection, or undefined where it cannot be reached. */
export function fullCollection(): (() => void) | undefined {
  const given = (globalThis as { gc?: unknown }).gc
  if (typeof given === 'function') return given as () => void
  try {
    v8.setFlagsFromString('--expose-gc')
    const gc: unknown = vm.runInNewContext('gc')
    return typeof gc === 'function' ? (gc as () => void) : undefined
  } catch {
    return undefined
  }
}

/** How long the server waits with nothing in flight before it collects (holdfast.yaml `limits.idle_collect_ms`). */
export const IDLE_COLLECT_MS = 3000

export class IdleCollector {
  /** How long the last collection took, ms (health: `idle_collection_ms`). */
  lastCollectionMs: number | undefined
  /** How long the last trim of malloc's heaps took, ms (health: `malloc_trim_ms`). */
  lastTrimMs: number | undefined
  private active = 0
  /** A request began since the last collection. */
  private dirty = false
  private lastEnd = 0
  private timer: NodeJS.Timeout | undefined
  private readonly releases: (() => unknown)[] = []

  constructor(
    private readonly idleMs: number,
    /** Default: V8's, reached at the first collection (reaching it makes a V8 context). */
    private readonly collect: () => void = onFirstUse(fullCollection),
    /** Default: glibc's `malloc_trim(0)`, reached at the first trim; undefined where there is none (then no time is recorded). */
    private readonly trim: () => boolean | undefined = onFirstUse(() => mallocTrim()),
  ) {}

  /** A request began; `grows` false for one that leaves nothing to collect (a health poll must not cause a collection). */
  begin(grows = true): void {
    this.active++
    if (grows) this.dirty = true
  }

  /** A request ended; `grows` as at its begin: one that grows nothing does not put the idle time off (a health poll every second must not keep the server from ever collecting). */
  end(grows = true): void {
    this.active--
    if (grows) this.lastEnd = Date.now()
    if (this.active === 0 && this.timer === undefined && this.idleMs > 0) this.arm(this.idleMs)
  }

  /**
   * Let go of something kept for speed at each idle collection, before it (a promise returned is
   * waited for; a request that began meanwhile puts the collection off to the next idle time).
   */
  onIdle(release: () => unknown): void {
    this.releases.push(release)
  }

  /** Stop the timer (shutdown). */
  stop(): void {
    clearTimeout(this.timer)
    this.timer = undefined
  }

  private arm(ms: number): void {
    // One timer per idle period, re-armed for what is left when requests came and went meanwhile.
    this.timer = setTimeout(() => {
      this.timer = undefined
      if (this.active > 0 || !this.dirty) return // the next end() arms again
      const left = this.lastEnd + this.idleMs - Date.now()
      if (left > 0) return this.arm(left)
      this.dirty = false
      const waits = this.releases.map((r) => r()).filter((r) => r instanceof Promise)
      if (waits.length === 0) return this.collectNow()
      void Promise.allSettled(waits).then(() => {
        if (this.active === 0) return this.collectNow()
        // A request came meanwhile: its end arms the next idle time.
        this.dirty = true
      })
    }, ms)
    this.timer.unref()
  }

  private collectNow(): void {
    const started = performance.now()
    this.collect()
    const collected = performance.now()
    this.lastCollectionMs = collected - started
    // After the collection: it frees what the dead buffers and strings held in malloc's heaps.
    if (this.trim() !== undefined) this.lastTrimMs = performance.now() - collected
  }
}
