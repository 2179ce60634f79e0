/**
 * The facts each agent's last request left (core/incremental): its bytes, scan and value, so the
 * next request reads only what is new. In memory only, within one byte budget over all agents —
 * the least recently used agent's facts go first, an idle agent's when it is forgotten — keyed by
 * the agent as addressed (`<ws>\0<agent>`). Invariant: a cache only; a request whose facts were
 * dropped, or that does not extend them, is read whole and gives the same result.
 */
import type { ReadFacts } from '../core/incremental'

/** A parsed JSON text costs about twice its bytes in memory, beside the bytes themselves. */
const COST_PER_BYTE = 3

export class ReadCache {
  /** Map order is use order: the first entry is the least recently used. */
  private readonly kept = new Map<string, { facts: ReadFacts; size: number }>()
  private total = 0
  /** The step each request was recorded as (its facts may be gone from the cache by then). */
  private readonly steps = new WeakMap<ReadFacts, number>()

  constructor(readonly budget: number) {}

  /** The request these facts are of was recorded as step `n` of its agent. */
  numbered(facts: ReadFacts, n: number): void {
    this.steps.set(facts, n)
  }

  /** The step the request these facts are of was recorded as, once it was. */
  stepOf(facts: ReadFacts): number | undefined {
    return this.steps.get(facts)
  }

  /** The agent's facts, if kept (they become the most recently used). */
  get(key: string): ReadFacts | undefined {
    const k = this.kept.get(key)
    if (!k) return undefined
    this.kept.delete(key)
    this.kept.set(key, k)
    return k.facts
  }

  /** Keep `facts` as the agent's last request's; one larger than the whole budget is not kept. */
  keep(key: string, facts: ReadFacts): void {
    this.forget(key)
    const size = COST_PER_BYTE * facts.bytes.length
    if (size > this.budget) return
    this.kept.set(key, { facts, size })
    this.total += size
    for (const [other, o] of this.kept) {
      if (this.total <= this.budget) break
      this.kept.delete(other)
      this.total -= o.size
    }
  }

  forget(key: string): void {
    const old = this.kept.get(key)
    if (!old) return
    this.kept.delete(key)
    this.total -= old.size
  }

  /** What is kept, for health: bytes it is counted as, and for how many agents. */
  get held(): { bytes: number; agents: number } {
    return { bytes: this.total, agents: this.kept.size }
  }
}
