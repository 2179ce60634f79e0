/**
 * The previous records the hold compares with, kept in memory: each agent's last recorded request
 * (so a large record is parsed once; docs/performance.md), within one byte budget over all agents — the least recently
 * used agent's copy is dropped first and read from the record again next time (record/index).
 * Invariant: a kept copy is exactly what was recorded, slimmed to what the hold reads: of the
 * parse, the top-level fields, the system messages and the head; of the bytes, the `tools` value
 * a held step re-sends (the transcript's bytes are not kept once per agent).
 */
import { hasLongTtl, type PreviousStep } from '../core/hold'
import { isObject, type JsonObject } from '../core/json'
import { arrayPrefixEnd, type ScannedTop, scanTopLevel } from '../core/json-scan'

interface Kept {
  step: number
  previous: PreviousStep
  /** What the copy costs in memory: its bytes and the parsed fields kept beside them. */
  size: number
}

/** A parsed JSON text costs about twice its bytes in memory (its strings, objects and arrays). */
const PARSED_PER_BYTE = 2

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
 * buffer (a socket read), which a kept copy would otherwise hold alive, once per agent.
 */
function own(bytes: Buffer): Buffer {
  if (bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.length) return bytes
  const copy = Buffer.allocUnsafeSlow(bytes.length)
  bytes.copy(copy)
  return copy
}

const TOOLS_OPEN = Buffer.from('{"tools":')
/** Shared by every copy without tools: nothing writes a kept copy's bytes. */
const NO_TOOLS = { bytes: Buffer.from('{}'), top: { ok: true, keys: new Map(), open: 0, close: 1 } } as const

/**
 * What the hold reads of a request's bytes — its top-level `tools` value, re-sent byte for byte by
 * a held step — as the smallest request holding exactly those bytes (`{"tools":…}`, or `{}`
 * without tools), with its scan. In memory of its own: a small Buffer from Node's pool would keep
 * the pool's whole slab alive, once per agent.
 */
function toolsOnly(bytes: Buffer, top: ScannedTop): { bytes: Buffer; top: ScannedTop } {
  const span = top.keys.get('tools')
  if (!span) return NO_TOOLS
  const length = span.valueEnd - span.valueStart
  const out = Buffer.allocUnsafeSlow(TOOLS_OPEN.length + length + 1)
  TOOLS_OPEN.copy(out, 0)
  bytes.copy(out, TOOLS_OPEN.length, span.valueStart, span.valueEnd)
  out[out.length - 1] = 0x7d // }
  const keys = new Map([
    ['tools', { keyStart: 1, valueStart: TOOLS_OPEN.length, valueEnd: TOOLS_OPEN.length + length }],
  ])
  return { bytes: out, top: { ok: true, keys, open: 0, close: out.length - 1 } }
}

/** The bytes of the part of a request `slim` kept: all of it but the transcript after the head. */
function slimBytes(bytes: Buffer, top: ScannedTop, parsed: JsonObject, kept: JsonObject): number {
  const span = top.keys.get('messages')
  if (kept === parsed || !span || !Array.isArray(kept.messages)) return bytes.length
  const end = arrayPrefixEnd(bytes, span.valueStart, kept.messages.length)
  return end === -1 ? bytes.length : bytes.length - (span.valueEnd - 1 - end)
}

/** The 1 h cache lifetime is asked for: looked for in the full request once, cheaply (a byte search first). */
function hasLongTtlIn(bytes: Buffer, parsed: JsonObject): boolean {
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
    const parsed = slim(previous.parsed)
    const longTtl = previous.longTtl ?? hasLongTtlIn(previous.bytes, previous.parsed)
    const top = previous.top ?? scanTopLevel(previous.bytes)
    let p: PreviousStep
    let size: number
    if (top.ok) {
      const tools = toolsOnly(previous.bytes, top)
      p = { ...previous, bytes: tools.bytes, top: tools.top, parsed, longTtl }
      size = tools.bytes.length + PARSED_PER_BYTE * slimBytes(previous.bytes, top, previous.parsed, parsed)
    } else {
      // A record whose top level does not scan is kept whole: the hold reports its fault.
      p = { ...previous, bytes: own(previous.bytes), top: undefined, parsed, longTtl }
      size = (1 + PARSED_PER_BYTE) * previous.bytes.length
    }
    this.keep(key, { step: n, previous: p, size })
    return p
  }

  /** The provider answered step `n` with `status` (the hold refuses to hold after a 4xx). */
  answered(key: string, n: number, status: number | undefined): void {
    const c = this.kept.get(key)
    if (c?.step === n) c.previous = { ...c.previous, status }
  }
}
