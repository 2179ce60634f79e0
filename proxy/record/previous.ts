/**
 * The previous record, for the hold: each agent's last recorded request, kept in memory (checked
 * against its file's stamp, so a 1 MB record is parsed once) within one byte budget over all
 * agents — the least recently used agent's copy is dropped first and read from disk next time.
 * Invariant: what the hold compares is what the record on disk says; a record that cannot be read
 * back as a request is a RecordFault (the step then goes as composed), never thrown at the caller.
 */
import fs from 'node:fs'
import path from 'node:path'
import { hasLongTtl, RecordFault, type PreviousStep } from '../core/hold'
import { isObject, type JsonObject } from '../core/json'
import { recordParser } from '../core/record'
import type { Dialect } from '../dialects/types'
import { fileStamp } from '../store/stamp'
import { readMetaSync, REQUEST_FILE } from './journal'

interface Kept {
  step: number
  previous: PreviousStep
  /** The request file's stamp when it was read (store/stamp). */
  stamp: string
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

  /**
   * The record before step `n` of the agent whose journal step directories are `stepDir(i)`:
   * from memory when its file is unchanged, else read from disk with the dialect's checks.
   * Undefined for a first step or an absent record; a RecordFault for one that is not a request.
   */
  read(
    key: string,
    stepDir: (n: number) => string,
    n: number,
    dialect: Dialect | undefined,
  ): PreviousStep | RecordFault | undefined {
    if (n <= 1) return undefined
    const dir = stepDir(n - 1)
    const file = path.join(dir, REQUEST_FILE)
    const stamp = fileStamp(file)
    if (stamp === undefined) return undefined
    const c = this.kept.get(key)
    if (c && c.step === n - 1 && c.stamp === stamp) {
      this.keep(key, c) // used again: the most recent now
      return c.previous
    }
    let bytes: Buffer
    try {
      bytes = fs.readFileSync(file)
    } catch (err) {
      // A directory in its place (EISDIR), or an unreadable file: a fault of the record, not "absent".
      return new RecordFault(file, (err as Error).message)
    }
    let full: JsonObject
    try {
      full = recordParser(dialect)(bytes, file)
    } catch (err) {
      if (err instanceof RecordFault) return err
      throw err
    }
    const meta = readMetaSync(dir)
    const previous: PreviousStep = {
      path: file,
      bytes,
      parsed: slim(full),
      longTtl: longTtl(bytes, full),
      sentAt: meta ? Date.parse(meta.started_at) : fs.statSync(file).mtimeMs,
      headers: meta?.cache_keying_headers ?? {},
      status: meta?.status ?? undefined,
    }
    this.keep(key, { step: n - 1, previous, stamp, size: keptSize(previous) })
    return previous
  }

  /** Remember step `n`'s request, just recorded, as the next step's previous. */
  remember(key: string, n: number, previous: PreviousStep): void {
    const p: PreviousStep = {
      ...previous,
      parsed: slim(previous.parsed),
      longTtl: previous.longTtl ?? longTtl(previous.bytes, previous.parsed),
    }
    this.keep(key, { step: n, previous: p, stamp: fileStamp(p.path) ?? '', size: keptSize(p) })
  }

  /** The provider answered step `n` with `status` (the hold refuses to hold after a 4xx). */
  answered(key: string, n: number, status: number | undefined): void {
    const c = this.kept.get(key)
    if (c?.step === n) c.previous = { ...c.previous, status }
  }
}
