/**
 * The body of an admin request: JSON (the guard already refused other content types), bounded in
 * size, silence and pace as a step's body is (body.ts). Invariant: a body that is too large, too
 * slow or not a JSON object is refused with the table's code.
 */
import type http from 'node:http'
import { BODY_IDLE_MS, BODY_MIN_RATE, readBody } from '../http/body'
import { HoldfastError } from '../core/errors'
import { isObject, type JsonObject } from '../core/json'

export async function readJsonBody(req: http.IncomingMessage, limit = 1024 * 1024): Promise<JsonObject> {
  const body = await readBody(req, { bytes: limit, idleMs: BODY_IDLE_MS, minRate: BODY_MIN_RATE }).catch(
    (err: unknown) => {
      if (err instanceof HoldfastError && err.code === 'BODY_TOO_LARGE')
        throw new HoldfastError('BODY_TOO_LARGE', `an admin request body is limited to ${limit} bytes`)
      throw err
    },
  )
  let v: unknown
  try {
    v = JSON.parse(body.toString('utf8'))
  } catch (err) {
    throw new HoldfastError('BAD_JSON', `the request body is not valid JSON: ${(err as Error).message}`)
  }
  if (!isObject(v)) throw new HoldfastError('BAD_JSON', 'the request body must be a JSON object')
  return v
}
