/**
 * Reading request bytes as a request, for the proxy (a client's body) and the hold and `why` (a
 * recorded one): at most MAX_NESTING deep (checked on the bytes, before parsing, so nothing
 * recurses deeper), JSON, one object, every field the dialect reads of the right type. Pure.
 * Invariant: the same bytes read the same way on both sides; only the words of a refusal differ.
 */
import type { Dialect } from './dialect'
import { RecordFault } from './hold'
import { isObject, type Json, type JsonObject } from './json'
import { parseJsonBytes } from './json-bytes'
import { MAX_NESTING, nestingDepth, type ScannedTop } from './json-scan'

/** Why bytes are not a request: too deep, not JSON (the parser's words), not an object, or a field. */
export type NotARequest =
  | { why: 'too-deep' }
  | { why: 'not-json'; detail: string }
  | { why: 'not-an-object' }
  | { why: 'field'; detail: string }

/** The request the bytes hold, or why they hold none. `dialect` undefined: no field checks. */
export function readRequest(
  bytes: Buffer,
  dialect: Dialect | undefined,
  /** scanTopLevel(bytes) when the caller has it: a large body's top level is then not walked again. */
  top?: ScannedTop,
): { ok: true; value: JsonObject } | ({ ok: false } & NotARequest) {
  if (nestingDepth(bytes, MAX_NESTING) > MAX_NESTING) return { ok: false, why: 'too-deep' }
  let v: Json
  try {
    v = parseJsonBytes(bytes, top)
  } catch (err) {
    return { ok: false, why: 'not-json', detail: (err as Error).message }
  }
  if (!isObject(v)) return { ok: false, why: 'not-an-object' }
  const bad = dialect?.checkShape(v)
  return bad === undefined ? { ok: true, value: v } : { ok: false, why: 'field', detail: bad }
}

/** The problem of a record that is not a request, as RecordFault words it. */
function problemOf(n: NotARequest): string {
  if (n.why === 'too-deep') return `nested deeper than ${MAX_NESTING} levels`
  if (n.why === 'not-json') return `not JSON (${n.detail})`
  if (n.why === 'not-an-object') return 'not a JSON object'
  return n.detail
}

/**
 * A reader of recorded requests for the hold: a record that is not a request (readRequest) is a
 * RecordFault, and the step then goes as composed. `dialect` undefined: no field checks.
 */
export const recordParser =
  (dialect: Dialect | undefined) =>
  (bytes: Buffer, file: string): JsonObject => {
    const r = readRequest(bytes, dialect)
    if (!r.ok) throw new RecordFault(file, problemOf(r))
    return r.value
  }

/** A recorded request without field checks (tests of the record cache). */
export const parseRecord = recordParser(undefined)
