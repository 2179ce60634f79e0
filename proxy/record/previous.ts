/**
 * The previous records the hold compares with, kept in memory: each agent's last recorded request
 * (so a 1 MB record is parsed once), within one byte budget over all agents — the least recently
 * used agent's copy is dropped first and read from the record again next time (record/index).
 * Invariant: a kept copy is exactly what was recorded, slimmed to what the hold reads.
 */
import { hasLongTtl, type PreviousStep } from '../core/hold'
import { isObject, type JsonObject } from '../core/json'

interface Kept {
  step: number
  previous: PreviousStep
  /** What the copy costs in memory: its bytes and the parsed fields kept beside them. */
  size: number
}

/** What a kept previous request costs in memory: its bytes and the parsed fields kept beside them. */
const keptSize = (p: PreviousStep): number => 3 * p.bytes.length

/**
 * What the hold reads of a previous request: every top-level field but the transcript, of which
 * only the leading system/developer messages and the first message after them (the head). A long
 * conversation's parsed transcript would otherwise stay in memory once per agent.
 */
export function slim(parsed: JsonObject): JsonObject {
  const messages = parsed.messages
  if (!Array.isArray(messages)) return parsed
  let i = 0
  while (i < messages.length) {
    const m = messages[i]
    if (!isObject(m) || (m.role !== 'system' && m.role !== 'developer')) break
    i++
  }
  return i + 1 >= messages.length ? parsed : { ...parsed, messages: messages.slice(0, i + 1) }
}

/**
 * `bytes` in memory of their own: a request read off a socket is often a view into a larger
 * buffer (64 KB reads), which a kept copy would otherwise hold alive, once per agent.
 */
function own(bytes: Buffer): Buffer {
  if (bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.length) return bytes
  const copy = Buffer.allocUnsafeSlow(bytes.length)
  bytes.copy(copy)
  return copy
}

/** The 1 h cache lifetime is asked for: looked for in the full request once, cheaply (a byte search first). */
function longTtl(bytes: Buffer, parsed: JsonObject): boolean {
  return bytes.includes('"1h"') && hasLongTtl(parsed)
}

/** The agents' previous requests, keyed by agent (`<ws>\0<agent>`), within `budget` bytes (LRU). */
export class PreviousRecords {
  /** Map order is use order: the first entry is the least recently used. */
  private readonly kept = new Map<string, Kept>()
  private total = 0

  constructor(readonly budget: number) {}

  private keep(key: string, k: Kept): void {
    this.forget(key)
    if (k.size > this.budget) return
    this.kept.set(key, k)
    this.total += k.size
    for (const [other, o] of this.kept) {
      if (this.total <= this.budget) break
      if (other === key) continue
      this.kept.delete(other)
      this.total -= o.size
    }
  }

  forget(key: string): void {
    const old = this.kept.get(key)
    if (old === undefined) return
    this.kept.delete(key)
    this.total -= old.size
  }

  /** Bytes held now, and by how many agents (health). */
  get held(): { bytes: number; agents: number } {
    return { bytes: this.total, agents: this.kept.size }
  }

  /** Whether the agent's copy is in memory (tests of the budget). */
  has(key: string): boolean {
    return this.kept.has(key)
  }

  /** The kept copy of the agent's step `n`, if that is the step it holds (it becomes the most recent). */
  get(key: string, n: number): PreviousStep | undefined {
    const c = this.kept.get(key)
    if (!c || c.step !== n) return undefined
    this.keep(key, c)
    return c.previous
  }

  /** Remember step `n`'s request, just recorded, as the next step's previous. */
  remember(key: string, n: number, previous: PreviousStep): PreviousStep {
    const p: PreviousStep = {
      ...previous,
      bytes: own(previous.bytes),
      parsed: slim(previous.parsed),
      longTtl: previous.longTtl ?? longTtl(previous.bytes, previous.parsed),
    }
    this.keep(key, { step: n, previous: p, size: keptSize(p) })
    return p
  }

  /** The provider answered step `n` with `status` (the hold refuses to hold after a 4xx). */
  answered(key: string, n: number, status: number | undefined): void {
    const c = this.kept.get(key)
    if (c?.step === n) c.previous = { ...c.previous, status }
  }
}
