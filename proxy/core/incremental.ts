/**
 * Incremental accept (DESIGN §5.1, docs/performance.md): a request read from the previous request's
 * facts and only what is new. An agent's next request is its previous one plus a tail (the new
 * turn, a moved `cache_control` marker): the bytes both share are found by one comparison, every
 * top-level member and transcript entry that lies wholly in them keeps the value read last time,
 * and only the rest is scanned and parsed. Pure.
 * Invariant: `readOnFacts(prev, b, d)` is either undefined (then the caller takes the general path,
 * which gives the answer or the refusal) or exactly what the general path would give for `b`:
 * the same value (keys in source order, structurally equal, reused subtrees shared with
 * `prev.parsed`), the same scan, the same verdict of the dialect's checks.
 */
import type { Dialect } from './dialect'
import { isObject, type Json, type JsonObject } from './json'
import { parseJsonBytes } from './json-bytes'
import {
  CLOSE_ARRAY,
  CLOSE_OBJECT,
  COLON,
  COMMA,
  commonPrefix,
  continueEntries,
  decodeKey,
  entriesOf,
  MAX_NESTING,
  nestingDepth,
  OPEN_ARRAY,
  QUOTE,
  type ScannedTop,
  scanTopLevel,
  skipSpace,
  skipString,
  skipValue,
  type Span,
} from './json-scan'

/** What a request that was read leaves for the next one: its bytes, scan, value and transcript entries. */
export interface ReadFacts {
  readonly bytes: Buffer
  readonly top: ScannedTop
  readonly parsed: JsonObject
  /** `[start, end)` of each entry of the transcript array (`dialect.transcriptField`), when it is one. */
  readonly entries?: { readonly starts: readonly number[]; readonly ends: readonly number[] }
}

/** The facts of a request the general path read (its bytes, scan and value). */
export function factsOf(bytes: Buffer, top: ScannedTop, parsed: JsonObject, dialect: Dialect): ReadFacts {
  const span = top.keys.get(dialect.transcriptField)
  const entries =
    span && bytes[span.valueStart] === OPEN_ARRAY ? entriesOf(bytes, span.valueStart) : undefined
  return entries ? { bytes, top, parsed, entries } : { bytes, top, parsed }
}

/** `JSON.parse` of `b[start, end)`, nested at most `room` deep; undefined when it is not (the general path says why). */
function valueAt(b: Buffer, start: number, end: number, room: number): Json | undefined {
  const piece = b.subarray(start, end)
  if (nestingDepth(piece, room) > room) return undefined
  try {
    return parseJsonBytes(piece)
  } catch {
    return undefined
  }
}

const sameBytes = (a: Buffer, as: Span, b: Buffer, bs: Span): boolean =>
  as.valueEnd - as.valueStart === bs.valueEnd - bs.valueStart &&
  a.compare(b, bs.valueStart, bs.valueEnd, as.valueStart, as.valueEnd) === 0

/**
 * `bytes` read on `prev`'s facts, or undefined when the general path must read them (no shared
 * prefix worth the name, a malformed tail, a problem the dialect's checks would name).
 */
export function readOnFacts(
  prev: ReadFacts,
  bytes: Buffer,
  dialect: Dialect,
  /** commonPrefix(prev.bytes, bytes), when the caller found it already (the read cache does). */
  shared = commonPrefix(prev.bytes, bytes),
): ReadFacts | undefined {
  if (shared <= prev.top.open) return undefined
  const field = dialect.transcriptField
  const keys = new Map<string, Span>()
  const entries: [string, Json][] = []
  // Members that lie wholly in the shared bytes are where they were, with the value they had.
  const members = [...prev.top.keys.entries()]
  let m = 0
  let listFacts: ReadFacts['entries']
  // Strictly before: a scalar's end is the byte after it, which must be shared too (`12` vs `123`).
  while (m < members.length && (members[m] as [string, Span])[1].valueEnd < shared) {
    const [key, span] = members[m] as [string, Span]
    keys.set(key, span)
    entries.push([key, prev.parsed[key] as Json])
    if (key === field) listFacts = prev.entries
    m++
  }
  let i: number
  if (m === 0) i = skipSpace(bytes, prev.top.open + 1)
  else {
    // Just past the last kept member: its `,` (or the object's end) comes next in the new bytes.
    i = skipSpace(bytes, (members[m - 1] as [string, Span])[1].valueEnd)
    if (bytes[i] === CLOSE_OBJECT)
      return finish(bytes, prev.top.open, i, keys, entries, dialect, [], listFacts)
    if (bytes[i] !== COMMA) return undefined
    i = skipSpace(bytes, i + 1)
  }
  let newEntries: number[] = []
  for (;;) {
    if (bytes[i] === CLOSE_OBJECT && keys.size === 0) break
    if (bytes[i] !== QUOTE) return undefined
    const keyStart = i
    const keyEnd = skipString(bytes, i)
    if (keyEnd === -1) return undefined
    const key = decodeKey(bytes, keyStart, keyEnd)
    if (key === undefined || keys.has(key)) return undefined
    i = skipSpace(bytes, keyEnd)
    if (bytes[i] !== COLON) return undefined
    const valueStart = skipSpace(bytes, i + 1)
    const old = prev.top.keys.get(key)
    let span: Span
    let value: Json | undefined
    if (
      key === field &&
      old &&
      prev.entries &&
      bytes[valueStart] === OPEN_ARRAY &&
      valueStart === old.valueStart
    ) {
      const list = transcript(prev, field, old, bytes, shared)
      if (!list) return undefined
      span = { keyStart, valueStart, valueEnd: list.valueEnd }
      value = list.value
      newEntries = list.fresh
      listFacts = { starts: list.starts, ends: list.ends }
    } else {
      const valueEnd = skipValue(bytes, valueStart)
      if (valueEnd === -1) return undefined
      span = { keyStart, valueStart, valueEnd }
      value =
        old && sameBytes(prev.bytes, old, bytes, span)
          ? (prev.parsed[key] as Json)
          : valueAt(bytes, valueStart, valueEnd, MAX_NESTING - 1)
      if (value === undefined) return undefined
      if (key === field && Array.isArray(value)) {
        const found = entriesOf(bytes, valueStart)
        if (!found) return undefined
        listFacts = found
        if (value !== prev.parsed[key]) newEntries = found.starts.map((_, k) => k)
      }
    }
    keys.set(key, span)
    entries.push([key, value])
    i = skipSpace(bytes, span.valueEnd)
    if (bytes[i] === CLOSE_OBJECT) break
    if (bytes[i] !== COMMA) return undefined
    i = skipSpace(bytes, i + 1)
  }
  return finish(bytes, prev.top.open, i, keys, entries, dialect, newEntries, listFacts)
}

/**
 * The transcript array of `bytes`, which starts where `prev`'s did: entries wholly in the shared
 * bytes are `prev`'s values; the rest are scanned and parsed. `fresh`: the indexes of those.
 */
function transcript(
  prev: ReadFacts,
  field: string,
  old: Span,
  bytes: Buffer,
  shared: number,
): { value: Json[]; valueEnd: number; starts: number[]; ends: number[]; fresh: number[] } | undefined {
  const was = prev.entries as NonNullable<ReadFacts['entries']>
  const before = prev.parsed[field]
  if (!Array.isArray(before) || before.length !== was.starts.length) return undefined
  let k = 0
  while (k < was.ends.length && (was.ends[k] as number) < shared) k++
  const starts = was.starts.slice(0, k)
  const ends = was.ends.slice(0, k)
  let end: number
  if (k === 0) end = continueEntries(bytes, skipSpace(bytes, old.valueStart + 1), starts, ends, true)
  else {
    const i = skipSpace(bytes, ends[k - 1] as number)
    if (bytes[i] === CLOSE_ARRAY) end = i + 1
    else if (bytes[i] === COMMA) end = continueEntries(bytes, skipSpace(bytes, i + 1), starts, ends, false)
    else return undefined
  }
  if (end === -1) return undefined
  const value: Json[] = before.slice(0, k)
  const fresh: number[] = []
  for (let e = k; e < starts.length; e++) {
    // Two levels taken already: the request object and the transcript array.
    const v = valueAt(bytes, starts[e] as number, ends[e] as number, MAX_NESTING - 2)
    if (v === undefined) return undefined
    value.push(v)
    fresh.push(e)
  }
  return { value, valueEnd: end, starts, ends, fresh }
}

/**
 * The request, once its members are read: nothing but whitespace after its `}`, and the dialect's
 * checks pass on what is new (the kept entries passed them last time; the checks are per entry,
 * so the first problem of the whole is the first of the new ones).
 */
function finish(
  bytes: Buffer,
  open: number,
  close: number,
  keys: Map<string, Span>,
  members: [string, Json][],
  dialect: Dialect,
  fresh: readonly number[],
  listFacts?: ReadFacts['entries'],
): ReadFacts | undefined {
  if (bytes[close] !== CLOSE_OBJECT || skipSpace(bytes, close + 1) !== bytes.length) return undefined
  const parsed = Object.fromEntries(members) as JsonObject
  const list = parsed[dialect.transcriptField]
  const checked =
    Array.isArray(list) && fresh.length < list.length
      ? { ...parsed, [dialect.transcriptField]: fresh.map((k) => list[k] as Json) }
      : parsed
  if (dialect.checkShape(checked) !== undefined) return undefined
  const top: ScannedTop = { ok: true, keys, open, close }
  return listFacts && Array.isArray(list)
    ? { bytes, top, parsed, entries: listFacts }
    : { bytes, top, parsed }
}

/** The general path's read, as facts: scanTopLevel then the parse (tests compare the two paths with it). */
export function readWhole(bytes: Buffer, dialect: Dialect): ReadFacts | undefined {
  const top = scanTopLevel(bytes)
  if (!top.ok || nestingDepth(bytes, MAX_NESTING) > MAX_NESTING) return undefined
  let parsed: Json
  try {
    parsed = parseJsonBytes(bytes, top)
  } catch {
    return undefined
  }
  if (!isObject(parsed) || dialect.checkShape(parsed) !== undefined) return undefined
  return factsOf(bytes, top, parsed, dialect)
}
