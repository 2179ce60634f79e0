/**
 * The body of an admin request: JSON (the guard already refused other content types), bounded.
 * Invariant: a body that is too large or not a JSON object is refused with the table's code.
 */
import type http from 'node:http'
import { HoldfastError } from './core/errors'
import { isObject, type JsonObject } from './core/json'

export async function readJsonBody(req: http.IncomingMessage, limit = 1024 * 1024): Promise<JsonObject> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > limit)
      throw new HoldfastError('BODY_TOO_LARGE', `an admin request body is limited to ${limit} bytes`)
    chunks.push(chunk)
  }
  let v: unknown
  try {
    v = JSON.parse(Buffer.concat(chunks).toString('utf8'))
  } catch (err) {
    throw new HoldfastError('BAD_JSON', `the request body is not valid JSON: ${(err as Error).message}`)
  }
  if (!isObject(v)) throw new HoldfastError('BAD_JSON', 'the request body must be a JSON object')
  return v
}
