/**
 * Reading a recorded request back (the hold's previous step, `why`): the same limits as a request
 * the proxy accepts. Pure. Invariant: a record too deep, not JSON, not an object or failing the
 * dialect's shape check is a RecordFault, never a crash deeper in (nothing recurses past the limit).
 */
import type { Dialect } from '../dialects/types'
import { RecordFault } from './hold'
import { isObject, type Json, type JsonObject } from './json'
import { MAX_NESTING, nestingDepth } from './splice'

/**
 * A reader of recorded requests for the hold: a record that is too deep, does not parse, is not
 * an object or fails the dialect's shape check is a RecordFault (the step then goes as composed).
 */
export const recordParser =
  (dialect: Dialect) =>
  (bytes: Buffer, file: string): JsonObject => {
    if (nestingDepth(bytes, MAX_NESTING) > MAX_NESTING)
      throw new RecordFault(file, `nested deeper than ${MAX_NESTING} levels`)
    const v = parseRecord(bytes, file)
    const bad = dialect.checkShape(v)
    if (bad) throw new RecordFault(file, bad)
    return v
  }

/** Parse a recorded request; a record that does not parse is a RecordFault. */
export function parseRecord(bytes: Buffer, file: string): JsonObject {
  let v: Json
  try {
    v = JSON.parse(bytes.toString('utf8')) as Json
  } catch (err) {
    throw new RecordFault(file, `not JSON (${(err as Error).message})`)
  }
  if (!isObject(v)) throw new RecordFault(file, 'not a JSON object')
  return v
}
