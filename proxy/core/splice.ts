/**
 * Byte splicing of a raw JSON request body: find the top-level members, then replace, remove or
 * insert whole members without re-serializing anything else. Invariant: every byte outside the
 * changed spans is kept (`2.50`, big integers, escapes and spacing survive). Callers never emit an
 * empty `tools` array (openai refuses it): use `toolsEdit`, which removes the key instead.
 * An empty object `{}` has no members; inserting into it writes `"key":value` right after `{`.
 */
import type { Json } from './json'

/** Byte offsets of one member: `keyStart` = its key's opening quote; `valueEnd` is exclusive. */
export interface Span {
  keyStart: number
  valueStart: number
  valueEnd: number
}

/** The top-level members by decoded key; `open`/`close` are the offsets of the object's braces. */
export type TopLevel =
  { ok: true; keys: Map<string, Span>; open: number; close: number } | { ok: false; error: string }
export type ScannedTop = Extract<TopLevel, { ok: true }>

/** One change to a top-level member; `value` undefined removes the key. */
export interface Edit {
  key: string
  value: Buffer | undefined
}

/** The bytes of JSON's structure, by name (json-bytes reads the same ones). */
export const QUOTE = 0x22
export const BACKSLASH = 0x5c
export const OPEN_OBJECT = 0x7b
export const CLOSE_OBJECT = 0x7d
export const OPEN_ARRAY = 0x5b
export const CLOSE_ARRAY = 0x5d
export const COMMA = 0x2c
export const COLON = 0x3a

export function isSpace(c: number | undefined): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09
}

export function skipSpace(b: Buffer, i: number): number {
  while (isSpace(b[i])) i++
  return i
}

/** Offset just past the string whose opening quote is at `i`; -1 when it never closes. */
export function skipString(b: Buffer, i: number): number {
  // Short strings (keys, enum values) end sooner than a native indexOf call returns.
  const near = Math.min(i + 24, b.length)
  let q = i + 1
  while (q < near && b[q] !== QUOTE) q++
  if (q === near) q = b.indexOf(QUOTE, near)
  while (q !== -1) {
    let slashes = 0
    while (b[q - 1 - slashes] === BACKSLASH) slashes++
    if (slashes % 2 === 0) return q + 1
    q = b.indexOf(QUOTE, q + 1)
  }
  return -1
}

/** The deepest nesting of objects and arrays a request may have (docs/records.md): deeper is refused. */
export const MAX_NESTING = 512

/**
 * The deepest nesting of objects and arrays in a JSON text (0 for a scalar), found in one pass
 * over the bytes without recursion, stopping as soon as it passes `limit`; strings are skipped.
 * Meant for text not parsed yet: brackets inside an unterminated string are not counted.
 */
export function nestingDepth(b: Buffer, limit = Infinity): number {
  let depth = 0
  let max = 0
  const n = b.length
  let i = 0
  while (i < n) {
    const c = b[i]
    if (c === QUOTE) {
      i = skipString(b, i)
      if (i === -1) return max
      continue
    }
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > max) {
        max = depth
        if (max > limit) return max
      }
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) depth--
    i++
  }
  return max
}

/** Offset just past the value starting at `i`; -1 on anything that is not a well-formed nesting. */
export function skipValue(b: Buffer, i: number): number {
  const first = b[i]
  if (first === QUOTE) return skipString(b, i)
  if (first === OPEN_OBJECT || first === OPEN_ARRAY) {
    let depth = 0
    const n = b.length
    while (i < n) {
      const c = b[i]
      if (c === QUOTE) {
        i = skipString(b, i)
        if (i === -1) return -1
        continue
      }
      if (c === OPEN_OBJECT || c === OPEN_ARRAY) depth++
      else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
        depth--
        if (depth === 0) return i + 1
      }
      i++
    }
    return -1
  }
  // A scalar: number, true, false or null, ended by a delimiter or whitespace.
  const start = i
  let c = b[i]
  while (c !== undefined && c !== COMMA && c !== CLOSE_OBJECT && c !== CLOSE_ARRAY && !isSpace(c)) c = b[++i]
  return i > start ? i : -1
}

/**
 * Offset just past the first `count` elements of the array whose `[` is at `open` (just past the
 * last one when it has fewer); -1 when they are not well-formed. Scans only those elements.
 */
export function arrayPrefixEnd(b: Buffer, open: number, count: number): number {
  if (b[open] !== OPEN_ARRAY) return -1
  let end = open + 1
  let i = skipSpace(b, end)
  for (let k = 0; k < count && b[i] !== CLOSE_ARRAY; k++) {
    const e = skipValue(b, i)
    if (e === -1) return -1
    end = e
    i = skipSpace(b, e)
    if (b[i] === COMMA) i = skipSpace(b, i + 1)
  }
  return end
}

/** A key's decoded text from its bytes (quotes included), or undefined when it is not a JSON string. */
export function decodeKey(b: Buffer, start: number, end: number): string | undefined {
  if (!b.subarray(start, end).includes(BACKSLASH)) return b.toString('utf8', start + 1, end - 1)
  try {
    const key: unknown = JSON.parse(b.toString('utf8', start, end))
    return typeof key === 'string' ? key : undefined
  } catch {
    return undefined
  }
}

/**
 * The top-level members of a body `JSON.parse` already accepted. Refuses (never throws) a body
 * that is not an object, or that repeats a top-level key (parsers disagree on which one wins).
 */
export function scanTopLevel(body: Buffer): TopLevel {
  const bad = (error: string): TopLevel => ({ ok: false, error })
  const open = skipSpace(body, 0)
  if (body[open] !== OPEN_OBJECT) return bad('the body is not a JSON object')
  const keys = new Map<string, Span>()
  let i = skipSpace(body, open + 1)
  if (body[i] === CLOSE_OBJECT) return finish(body, keys, open, i)
  for (;;) {
    if (body[i] !== QUOTE) return bad(`expected a key at byte ${i}`)
    const keyStart = i
    const keyEnd = skipString(body, i)
    if (keyEnd === -1) return bad(`unterminated key at byte ${i}`)
    const key = decodeKey(body, keyStart, keyEnd)
    if (key === undefined) return bad(`undecodable key at byte ${keyStart}`)
    if (keys.has(key)) return bad(`duplicated top-level key ${JSON.stringify(key)}`)
    i = skipSpace(body, keyEnd)
    if (body[i] !== COLON) return bad(`expected ":" at byte ${i}`)
    const valueStart = skipSpace(body, i + 1)
    const valueEnd = skipValue(body, valueStart)
    if (valueEnd === -1) return bad(`malformed value at byte ${valueStart}`)
    keys.set(key, { keyStart, valueStart, valueEnd })
    i = skipSpace(body, valueEnd)
    if (body[i] === CLOSE_OBJECT) return finish(body, keys, open, i)
    if (body[i] !== COMMA) return bad(`expected "," or "}" at byte ${i}`)
    i = skipSpace(body, i + 1)
  }
}

function finish(body: Buffer, keys: Map<string, Span>, open: number, close: number): TopLevel {
  if (skipSpace(body, close + 1) !== body.length)
    return { ok: false, error: 'bytes after the top-level object' }
  return { ok: true, keys, open, close }
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
