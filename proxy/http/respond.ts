/**
 * Answers holdfast produces itself: errors in the dialect's own envelope (`toWireError` is the
 * only translation from a HoldfastError), and JSON for the admin endpoints. Invariant: a status
 * comes from the error table, never invented at the call site.
 */
import fs from 'node:fs'
import type { ServerResponse } from 'node:http'
import path from 'node:path'
import { ERROR_CODES, HoldfastError } from '../core/errors'
import type { Dialect } from '../core/dialect'

/** Absolute forms of the home that answers must not show (set by serve; one serve per process). */
let homes: string[] = []

/** Answers say `<home>` where a message would show the home's absolute path. */
export function hideHomeInErrors(home: string): void {
  const forms = new Set([path.resolve(home)])
  try {
    forms.add(fs.realpathSync(home))
  } catch {
    // not there yet: its resolved path is enough
  }
  homes = [...forms].sort((a, b) => b.length - a.length)
}

function scrub(message: string): string {
  let out = message
  for (const h of homes) out = out.split(h).join('<home>')
  return out
}

/** Any thrown value as a HoldfastError (unknown faults are INTERNAL, with the cause chained). */
export function asHoldfastError(err: unknown): HoldfastError {
  if (err instanceof HoldfastError) return err
  return new HoldfastError('INTERNAL', `holdfast failed: ${(err as Error)?.message ?? String(err)}`, {
    cause: err,
  })
}

/** The wire form of a local fault: status and body in the dialect's envelope (admin: holdfast's own). */
export function toWireError(
  err: HoldfastError,
  dialect: Dialect | undefined,
): { status: number; body: Buffer } {
  const entry = ERROR_CODES[err.code]
  const message = scrub(err.message)
  const body = dialect
    ? dialect.errorBody(entry.type, message)
    : Buffer.from(JSON.stringify({ error: { code: err.code, message } }))
  return { status: entry.status, body }
}

export function sendError(res: ServerResponse, dialect: Dialect | undefined, err: unknown): void {
  if (res.headersSent) {
    res.destroy()
    return
  }
  const e = asHoldfastError(err)
  const { status, body } = toWireError(e, dialect)
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': body.length,
    'x-holdfast-error': e.code,
  })
  res.end(body)
}

export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = Buffer.from(JSON.stringify(value) + '\n')
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': body.length })
  res.end(body)
}
