/**
 * The facts the last requests to each address left (core/incremental): their bytes, scan and
 * value, so the next request reads only what is new. Keyed by the agent as addressed
 * (`<ws>\0<agent>`), before any plugin moves a request: one address carries several conversations
 * (Claude Code's main chain, its subagents, its side requests), so each keeps its last few, and a
 * request reads on the one it shares the longest prefix with. In memory only, within one byte
 * budget over all addresses: the least recently used facts go first, an idle agent's when it is
 * forgotten. Invariant: a cache only; a request whose facts were dropped, or that extends none,
 * is read whole and gives the same result.
 */
import type { ReadFacts } from '../core/incremental'
import { commonPrefix } from '../core/json-scan'

/** A parsed JSON text costs about twice its bytes in memory, beside the bytes themselves. */
const COST_PER_BYTE = 3

/** How many conversations one address keeps the last request of. */
export const CONVERSATIONS_PER_ADDRESS = 4

interface Kept {
  facts: ReadFacts
  size: number
}

export class ReadCache {
  /** Map order is use order: the first address is the least recently used; each list newest first. */
  private readonly kept = new Map<string, Kept[]>()
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

  /**
   * Of the address's kept facts, the ones `bytes` shares the longest prefix with, how long it is
   * (readOnFacts takes it instead of comparing again), and whether
   * `bytes` continues their conversation (it shares everything up to their last transcript entry,
   * which a moved marker may have changed). The address becomes the most recent.
   */
  nearest(key: string, bytes: Buffer): { facts: ReadFacts; shared: number; continues: boolean } | undefined {
    const list = this.kept.get(key)
    if (!list) return undefined
    this.kept.delete(key)
    this.kept.set(key, list)
    let best: ReadFacts | undefined
    let longest = -1
    for (const k of list) {
      const shared = commonPrefix(k.facts.bytes, bytes)
      if (shared > longest) [best, longest] = [k.facts, shared]
    }
    if (!best) return undefined
    const last = best.entries?.starts.at(-1)
    return { facts: best, shared: longest, continues: last !== undefined && longest > last }
  }

  /**
   * Keep `facts` as the newest of the address's, in place of `replaces` (the facts it was read on:
   * that conversation moved on); the address's oldest beyond CONVERSATIONS_PER_ADDRESS go. Facts
   * larger than the whole budget are not kept.
   */
  keep(key: string, facts: ReadFacts, replaces?: ReadFacts): void {
    const list = (this.kept.get(key) ?? []).filter((k) => {
      if (k.facts !== replaces) return true
      this.total -= k.size
      return false
    })
    const size = COST_PER_BYTE * facts.bytes.length
    if (size <= this.budget) {
      list.unshift({ facts, size })
      this.total += size
    }
    while (list.length > CONVERSATIONS_PER_ADDRESS) this.total -= (list.pop() as Kept).size
    this.kept.delete(key)
    if (list.length > 0) this.kept.set(key, list)
    for (const [other, l] of this.kept) {
      if (this.total <= this.budget) break
      while (l.length > 0 && this.total > this.budget) this.total -= (l.pop() as Kept).size
      if (l.length === 0) this.kept.delete(other)
    }
  }

  /** Forget every conversation of the address. */
  forget(key: string): void {
    for (const k of this.kept.get(key) ?? []) this.total -= k.size
    this.kept.delete(key)
  }

  /** What is kept, for health: the bytes it is counted as, and for how many addresses. */
  get held(): { bytes: number; agents: number } {
    return { bytes: this.total, agents: this.kept.size }
  }
}
