/**
 * `POST /_holdfast/events/refs`: what the `reference-transaction` hook sends after git moved
 * config refs (`{workspace?, refs: [{ref, old, new}]}`), answered 204. Invariant: an event is a
 * hint and nothing more: the proxy reads config refs itself at every step (store/config/lineage),
 * so nothing here caches, invalidates or waits; it is logged at debug.
 */
import type http from 'node:http'
import { HoldfastError } from '../core/errors'
import { isObject } from '../core/json'
import { readJsonBody } from './body'
import type { ServerContext } from '../live/context'

const EVENT_LIMIT = 64 * 1024

const isUpdate = (u: unknown): boolean =>
  isObject(u) && typeof u.ref === 'string' && typeof u.old === 'string' && typeof u.new === 'string'

export async function handleEventsAdmin(
  ctx: ServerContext,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  pathname: string,
): Promise<void> {
  if (req.method !== 'POST' || pathname !== '/_holdfast/events/refs') {
    throw new HoldfastError('NOT_FOUND', `no such admin endpoint: ${req.method ?? 'GET'} ${pathname}`)
  }
  const body = await readJsonBody(req, EVENT_LIMIT)
  if (!Array.isArray(body.refs) || !body.refs.every(isUpdate)) {
    throw new HoldfastError('BAD_REQUEST', 'field "refs" must be an array of {ref, old, new} strings')
  }
  if (body.workspace !== undefined && typeof body.workspace !== 'string') {
    throw new HoldfastError('BAD_REQUEST', 'field "workspace" must be a string')
  }
  ctx.log.debug({ workspace: body.workspace, refs: body.refs }, 'hook event: refs moved')
  res.writeHead(204)
  res.end()
}
