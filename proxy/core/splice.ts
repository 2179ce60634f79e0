/**
 * Byte splicing of a raw JSON request body: given its top-level members (core/json-scan
 * `scanTopLevel`), replace, remove or insert whole members without re-serializing anything else. Invariant: every byte outside the
 * changed spans is kept (`2.50`, big integers, escapes and spacing survive). Callers never emit an
 * empty `tools` array (openai refuses it): use `toolsEdit`, which removes the key instead.
 * An empty object `{}` has no members; inserting into it writes `"key":value` right after `{`.
 */
import type { Json } from './json'
import type { ScannedTop } from './json-scan'

/** One change to a top-level member; `value` undefined removes the key. */
export interface Edit {
  key: string
  value: Buffer | undefined
}

interface Splice {
  start: number
  end: number
  bytes: Buffer
}

const EMPTY = Buffer.alloc(0)

/**
 * `body` with `edits` applied in one pass: a present key's value span replaced, a removed key taken
 * out with exactly one adjacent comma, an absent key appended after the last member. Throws when
 * two edits name the same key (a caller bug, never a request fault).
 */
export function applyEdits(body: Buffer, top: ScannedTop, edits: readonly Edit[]): Buffer {
  const byKey = new Map<string, Edit>()
  for (const e of edits) {
    if (byKey.has(e.key)) throw new Error(`applyEdits: two edits of the key ${JSON.stringify(e.key)}`)
    byKey.set(e.key, e)
  }
  const members = [...top.keys.entries()].sort((a, b) => a[1].keyStart - b[1].keyStart)
  const removed = members.map(([k]) => byKey.has(k) && byKey.get(k)?.value === undefined)
  const splices: Splice[] = []
  // The trailing run of removed members takes the comma before it; every other removal takes the one after.
  let tail = members.length
  while (tail > 0 && removed[tail - 1] === true) tail--
  members.forEach(([key, span], idx) => {
    const edit = byKey.get(key)
    if (edit?.value !== undefined)
      splices.push({ start: span.valueStart, end: span.valueEnd, bytes: edit.value })
    else if (removed[idx] === true && idx < tail) {
      const next = members[idx + 1]?.[1]
      if (next) splices.push({ start: span.keyStart, end: next.keyStart, bytes: EMPTY })
    }
  })
  const last = members[members.length - 1]?.[1]
  if (last !== undefined && tail < members.length) {
    const before = members[tail - 1]?.[1]
    const start = before ? before.valueEnd : (members[0]?.[1].keyStart ?? last.keyStart)
    splices.push({ start, end: last.valueEnd, bytes: EMPTY })
  }
  const inserted = edits.filter((e) => e.value !== undefined && !top.keys.has(e.key))
  if (inserted.length > 0) {
    const parts: Buffer[] = []
    inserted.forEach((e, n) => {
      if (n > 0 || tail > 0) parts.push(Buffer.from(','))
      parts.push(Buffer.from(`${JSON.stringify(e.key)}:`), e.value ?? EMPTY)
    })
    const at = last ? last.valueEnd : top.open + 1
    splices.push({ start: at, end: at, bytes: Buffer.concat(parts) })
  }
  return splice(body, splices)
}

function splice(body: Buffer, splices: Splice[]): Buffer {
  if (splices.length === 0) return body
  splices.sort((a, b) => a.start - b.start || a.end - b.end)
  const out: Buffer[] = []
  let at = 0
  for (const s of splices) {
    if (s.start < at) throw new Error('applyEdits: overlapping edits')
    out.push(body.subarray(at, s.start), s.bytes)
    at = s.end
  }
  out.push(body.subarray(at))
  return Buffer.concat(out)
}

/** A new value's bytes (only for values holdfast itself makes; client bytes are spliced, never re-encoded). */
export function jsonBytes(v: Json): Buffer {
  return Buffer.from(JSON.stringify(v), 'utf8')
}

/** The edit that sets `tools`, removing the key instead of sending an empty array. */
export function toolsEdit(tools: readonly Json[]): Edit {
  return { key: 'tools', value: tools.length === 0 ? undefined : jsonBytes(tools as Json[]) }
}
