/**
 * Reading a posted form (`application/x-www-form-urlencoded`, what a browser sends for the view's
 * forms), size-limited. Invariant: anything else, or anything larger, is refused before a field is
 * read.
 */
import type http from 'node:http'
import { HoldfastError } from '../core/errors'

/** The largest form the view accepts (a goal is text; 256 KB is generous). */
export const FORM_LIMIT = 256 * 1024

export async function readForm(req: http.IncomingMessage, limit = FORM_LIMIT): Promise<URLSearchParams> {
  const type = String(req.headers['content-type'] ?? '')
  if (!/^application\/x-www-form-urlencoded\s*(;.*)?$/i.test(type))
    throw new HoldfastError(
      'VIEW_FORM_INVALID',
      `a form must be application/x-www-form-urlencoded (got ${JSON.stringify(type)})`,
    )
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > limit) throw new HoldfastError('BODY_TOO_LARGE', `the form is over the ${limit}-byte limit`)
    chunks.push(chunk)
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'))
}
