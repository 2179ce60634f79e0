/**
 * The byte scanner of JSON request bodies, the one room every reader of raw bytes walks in: JSON's
 * structural bytes by name, skipping whitespace, strings and whole values, the nesting depth, the
 * top-level members (`scanTopLevel`), an array's entries (`entriesOf`), and the prefix two bodies
 * share (`commonPrefix`). One cursor type throughout: a byte offset into the body, and -1 (or an
 * `ok: false` scan) where the bytes are not well-formed. Pure; nothing here parses a value.
 * Callers: core/splice (edits), core/json-bytes (the pieced parse), core/incremental (the tail read).
 */

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

/** The bytes of JSON's structure, by name. */
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

/** How many bytes are compared at once before the first differing byte is looked for inside them. */
const CHUNK = 16 * 1024

/** The length of the longest common prefix of `a` and `b`: whole chunks by memcmp, then byte by byte. */
export function commonPrefix(a: Buffer, b: Buffer): number {
  const n = Math.min(a.length, b.length)
  let at = 0
  while (at < n) {
    const end = Math.min(at + CHUNK, n)
    if (a.compare(b, at, end, at, end) !== 0) break
    at = end
  }
  while (at < n && a[at] === b[at]) at++
  return at
}

/** The entries of the array whose `[` is at `open` in `b`, or undefined when it is not a well-formed array. */
export function entriesOf(b: Buffer, open: number): { starts: number[]; ends: number[] } | undefined {
  const starts: number[] = []
  const ends: number[] = []
  return continueEntries(b, skipSpace(b, open + 1), starts, ends, true) === -1 ? undefined : { starts, ends }
}

/**
 * Scan entries from `i` (at an entry's first byte, or at `]`) to the array's `]`, pushing their
 * spans; `first`: no entry before `i`. The offset just past `]`, or -1 when malformed.
 */
export function continueEntries(
  b: Buffer,
  i: number,
  starts: number[],
  ends: number[],
  first: boolean,
): number {
  if (b[i] === CLOSE_ARRAY) return first ? i + 1 : -1
  for (;;) {
    const e = skipValue(b, i)
    if (e === -1) return -1
    starts.push(i)
    ends.push(e)
    i = skipSpace(b, e)
    if (b[i] === CLOSE_ARRAY) return i + 1
    if (b[i] !== COMMA) return -1
    i = skipSpace(b, i + 1)
  }
}
