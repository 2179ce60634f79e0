/**
 * Parsing a large JSON body from its bytes without one string of the whole body. Pure.
 * Invariant: `parseJsonBytes(b)` is `JSON.parse(b.toString('utf8'))` — the same value (keys in
 * the same order, a repeated key's last value at its first place, `__proto__` an own key) or the
 * same exception — however it gets there.
 *
 * Why: V8 puts every large string in a large-object page of its own, mapped afresh and unmapped
 * at the next garbage collection; parsing a large body the plain way makes two such strings (the
 * text, then the message inside it), each paid for in page faults (the figures and the command:
 * docs/performance.md). So a body over twice PIECE bytes is parsed in
 * pieces of at most PIECE bytes: runs of small members or elements with one `JSON.parse` each, a
 * large value by recursing into it, and a long string as the concatenation of its pieces (a rope:
 * V8 keeps it in pieces until something needs it flat). The bytes between pieces (whitespace,
 * `,`, `:`, brackets, keys) are checked here; the pieces themselves by `JSON.parse`. Anything
 * unexpected — bytes that are not UTF-8, a piece `JSON.parse` refuses, a long string with no place
 * to cut it — falls back to the plain parse of the whole text, which then gives the answer (its
 * value, or its exact error).
 */
import { isUtf8 } from 'node:buffer'
import type { Json, JsonObject } from './json'
import {
  BACKSLASH,
  CLOSE_ARRAY,
  CLOSE_OBJECT,
  COLON,
  COMMA,
  isSpace,
  OPEN_ARRAY,
  OPEN_OBJECT,
  QUOTE,
  type ScannedTop,
  skipSpace,
  skipString,
  skipValue,
} from './json-scan'

/** The most bytes parsed as one string: far below V8's large-object size even as UTF-16. */
export const PIECE = 32 * 1024

/** How far past a piece's nominal end a long string's cut may move before the string is parsed whole. */
const MAX_CUT_SEARCH = 1024
/**
 * How many large values deep the pieces go; deeper, the whole text is parsed (JSON.parse does not
 * recurse, this does: a response is not depth-checked before it is parsed).
 */
const MAX_DEPTH = 64

/** Returned (never thrown) when the pieces cannot give the answer: the whole text is parsed instead. */
const FAIL: unique symbol = Symbol('fail')
type Parsed = Json | typeof FAIL

/**
 * `JSON.parse(bytes.toString('utf8'))`, without a string of the whole body when it is large. `top`:
 * scanTopLevel(bytes) when the caller made it, so the top level is not walked a second time.
 */
export function parseJsonBytes(bytes: Buffer, top?: ScannedTop): Json {
  return (
    (bytes.length > 2 * PIECE ? inPieces(bytes, top) : undefined) ??
    (JSON.parse(bytes.toString('utf8')) as Json)
  )
}

/** The value parsed in pieces, or undefined when the pieces cannot give it (then parse the whole text). */
export function inPieces(bytes: Buffer, top?: ScannedTop): Json | undefined {
  if (!isUtf8(bytes)) return undefined
  let v: Parsed
  if (top) v = scannedObject(bytes, top)
  else {
    const start = skipSpace(bytes, 0)
    let end = bytes.length
    while (end > start && isSpace(bytes[end - 1])) end--
    v = value(bytes, start, end, 0)
  }
  return v === FAIL ? undefined : v
}

function parsed(text: string): Parsed {
  try {
    return JSON.parse(text) as Json
  } catch {
    return FAIL
  }
}

/** The value spanning exactly `[start, end)`. */
function value(b: Buffer, start: number, end: number, depth: number): Parsed {
  if (end - start <= PIECE) return parsed(b.toString('utf8', start, end))
  if (depth > MAX_DEPTH) return FAIL
  const c = b[start]
  if (c === QUOTE) return longString(b, start, end)
  if (c === OPEN_ARRAY) return array(b, start, end, depth)
  if (c === OPEN_OBJECT) return object(b, start, end, depth)
  return parsed(b.toString('utf8', start, end))
}

/**
 * Whether a string's content may be cut just before `at`: the byte there starts a character (ASCII,
 * not a UTF-8 continuation) and no escape (`\X`, at most `\uXXXX`) started in the 5 bytes before.
 */
function cutsCleanly(b: Buffer, at: number): boolean {
  if ((b[at] as number) >= 0x80) return false
  for (let k = 1; k <= 5; k++) if (b[at - k] === BACKSLASH) return false
  return true
}

/** A string of more than PIECE bytes (`b[start]` and `b[end - 1]` are its quotes), as a rope of pieces. */
function longString(b: Buffer, start: number, end: number): Parsed {
  const last = end - 1
  let out = ''
  for (let at = start + 1; at < last;) {
    let cut = Math.min(at + PIECE, last)
    if (cut < last) {
      const limit = Math.min(cut + MAX_CUT_SEARCH, last)
      while (cut < limit && !cutsCleanly(b, cut)) cut++
      if (cut === limit && cut !== last) return parsed(b.toString('utf8', start, end))
    }
    const piece = parsed(`"${b.toString('utf8', at, cut)}"`)
    if (typeof piece !== 'string') return FAIL
    out += piece
    at = cut
  }
  return out
}

/**
 * Members (of an object) or elements (of an array) in source order: consecutive small ones are
 * parsed together, `JSON.parse` of `open + their bytes + close`; a large one alone.
 */
class Runs {
  private from = -1
  private to = -1

  constructor(
    private readonly b: Buffer,
    private readonly open: string,
    private readonly close: string,
    private readonly take: (v: Json) => void,
  ) {}

  /** Add the small item `[start, end)`; false when the run before it could not be parsed. */
  add(start: number, end: number): boolean {
    if (this.from >= 0 && end - this.from > PIECE && !this.flush()) return false
    if (this.from < 0) this.from = start
    this.to = end
    return true
  }

  flush(): boolean {
    if (this.from < 0) return true
    const v = parsed(`${this.open}${this.b.toString('utf8', this.from, this.to)}${this.close}`)
    this.from = -1
    if (v === FAIL) return false
    this.take(v)
    return true
  }
}

function array(b: Buffer, start: number, end: number, depth: number): Parsed {
  const out: Json[] = []
  let i = skipSpace(b, start + 1)
  if (b[i] === CLOSE_ARRAY) return i === end - 1 ? out : FAIL
  const runs = new Runs(b, '[', ']', (v) => {
    for (const x of v as Json[]) out.push(x)
  })
  for (;;) {
    const e = skipValue(b, i)
    if (e === -1 || e >= end) return FAIL
    if (e - i > PIECE) {
      if (!runs.flush()) return FAIL
      const v = value(b, i, e, depth + 1)
      if (v === FAIL) return FAIL
      out.push(v)
    } else if (!runs.add(i, e)) return FAIL
    i = skipSpace(b, e)
    if (b[i] === CLOSE_ARRAY) {
      if (i !== end - 1) return FAIL
      break
    }
    if (b[i] !== COMMA) return FAIL
    i = skipSpace(b, i + 1)
  }
  return runs.flush() ? out : FAIL
}

/**
 * An object's members in source order, made into the object at the end the way JSON.parse makes
 * it: `member(keyStart, keyEnd, valueStart, valueEnd)` for each, false when one cannot be parsed.
 */
class Members {
  private readonly entries: [string, Json][] = []
  private readonly runs: Runs

  constructor(
    private readonly b: Buffer,
    private readonly depth: number,
  ) {
    this.runs = new Runs(b, '{', '}', (v) => {
      const o = v as JsonObject
      for (const k of Object.keys(o)) this.entries.push([k, o[k] as Json])
    })
  }

  member(keyStart: number, keyEnd: number, valueStart: number, valueEnd: number): boolean {
    if (valueEnd - valueStart <= PIECE) return this.runs.add(keyStart, valueEnd)
    if (!this.runs.flush()) return false
    const key = parsed(this.b.toString('utf8', keyStart, keyEnd))
    if (typeof key !== 'string') return false
    const v = value(this.b, valueStart, valueEnd, this.depth + 1)
    if (v === FAIL) return false
    this.entries.push([key, v])
    return true
  }

  object(): Parsed {
    if (!this.runs.flush()) return FAIL
    // Object.fromEntries defines each key as JSON.parse does: a repeated key keeps its first place
    // and takes the last value; `__proto__` is an own key, not the prototype.
    return Object.fromEntries(this.entries) as JsonObject
  }
}

function object(b: Buffer, start: number, end: number, depth: number): Parsed {
  let i = skipSpace(b, start + 1)
  if (b[i] === CLOSE_OBJECT) return i === end - 1 ? {} : FAIL
  const members = new Members(b, depth)
  for (;;) {
    if (b[i] !== QUOTE) return FAIL
    const keyEnd = skipString(b, i)
    if (keyEnd === -1) return FAIL
    const colon = skipSpace(b, keyEnd)
    if (b[colon] !== COLON) return FAIL
    const valueStart = skipSpace(b, colon + 1)
    const valueEnd = skipValue(b, valueStart)
    if (valueEnd === -1 || valueEnd >= end) return FAIL
    if (!members.member(i, keyEnd, valueStart, valueEnd)) return FAIL
    i = skipSpace(b, valueEnd)
    if (b[i] === CLOSE_OBJECT) {
      if (i !== end - 1) return FAIL
      break
    }
    if (b[i] !== COMMA) return FAIL
    i = skipSpace(b, i + 1)
  }
  return members.object()
}

/**
 * The top-level object from its scan: scanTopLevel checked the bytes between its members (and
 * refused a repeated key), so only the members are read, in source order.
 */
function scannedObject(b: Buffer, top: ScannedTop): Parsed {
  const members = new Members(b, 0)
  for (const span of top.keys.values()) {
    const keyEnd = skipString(b, span.keyStart)
    if (keyEnd === -1 || !members.member(span.keyStart, keyEnd, span.valueStart, span.valueEnd)) return FAIL
  }
  return members.object()
}
