/**
 * The one module that talks to providers, through one undici 7 agent: recorded requests (a
 * buffered body that may have changed) and every other provider path, streamed unchanged.
 * Invariant: what leaves here carries no hop-by-hop or `x-holdfast-*` header, a `Host` and
 * `content-length` that match what is sent, and the row's key when the row names `api_key_env`.
 */
import type http from 'node:http'
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http'
import { pipeline } from 'node:stream/promises'
import type { Agent, Dispatcher } from 'undici'
import { HoldfastError } from '../core/errors'
import { rowFamily } from '../dialects'
import type { ProviderRow } from '../store/config'

/** RFC 9110 §7.6.1 connection-specific fields, plus the legacy ones proxies must not forward. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
])

/** The provider URL for an incoming provider path (query kept), by the row's family. */
export function upstreamUrl(row: ProviderRow, incoming: string): URL {
  return rowFamily(row.dialect).upstreamUrl(row.base_url, incoming)
}

/** The environment variable a row takes its key from is set, or a 500 naming it. */
export function rowKey(rowName: string, row: ProviderRow): string | undefined {
  if (!row.api_key_env) return undefined
  const key = process.env[row.api_key_env]
  if (!key) {
    throw new HoldfastError(
      'PROVIDER_KEY_MISSING',
      `provider row "${rowName}" takes its key from $${row.api_key_env}, which is not set in holdfast's environment`,
    )
  }
  return key
}

/** Names the client's `Connection` header lists: also hop-by-hop for this one message. */
function connectionListed(headers: IncomingHttpHeaders): Set<string> {
  const listed = new Set<string>()
  const value = headers.connection
  for (const v of Array.isArray(value) ? value : value ? [value] : []) {
    for (const name of v.split(',')) listed.add(name.trim().toLowerCase())
  }
  return listed
}

/** Set the provider's auth header from the row's key, replacing whatever the client sent. */
function applyKey(out: Record<string, string | string[]>, row: ProviderRow, key: string | undefined): void {
  if (key === undefined) return
  delete out.authorization
  delete out['x-api-key']
  Object.assign(out, rowFamily(row.dialect).authHeaders(key))
}

/** The client's headers minus hop-by-hop, `Connection`-listed, `expect` and `x-holdfast-*`, with the row's key. */
/** On every answer holdfast passed through unrecorded (docs/errors.md). */
export const PASSTHROUGH_HEADER = 'x-holdfast-passthrough'

export function cleanHeaders(
  client: IncomingHttpHeaders,
  row: ProviderRow,
  key: string | undefined,
): Record<string, string | string[]> {
  const listed = connectionListed(client)
  const out: Record<string, string | string[]> = {}
  for (const [name, value] of Object.entries(client)) {
    if (value === undefined) continue
    if (HOP_BY_HOP.has(name) || listed.has(name) || name === 'expect') continue
    if (name.startsWith('x-holdfast-')) continue
    out[name] = value
  }
  applyKey(out, row, key)
  return out
}

/**
 * The headers a recorded request is sent with: the client's, minus hop-by-hop, `Connection`-listed,
 * `expect`, `host`, `content-length` and `x-holdfast-*`, then `host`/`content-length` of what is sent.
 */
export function forwardHeaders(
  client: IncomingHttpHeaders,
  target: URL,
  contentLength: number,
  row: ProviderRow,
  key: string | undefined,
): Record<string, string | string[]> {
  const out = cleanHeaders(client, row, key)
  out.host = target.host
  out['content-length'] = String(contentLength)
  return out
}

/** Response headers the client gets: all of the provider's but hop-by-hop and `Connection`-listed ones. */
export function responseHeaders(
  upstream: IncomingHttpHeaders | Record<string, string | string[] | undefined>,
): OutgoingHttpHeaders {
  const listed = connectionListed(upstream as IncomingHttpHeaders)
  const out: OutgoingHttpHeaders = {}
  for (const [name, value] of Object.entries(upstream)) {
    // `trailer` announces the trailers the client gets after the body: it goes through with them.
    if (value === undefined || (HOP_BY_HOP.has(name) && name !== 'trailer') || listed.has(name)) continue
    out[name] = value
  }
  return out
}

export interface UpstreamOptions {
  headersTimeoutMs: number
  bodyTimeoutMs: number
}

export class Upstream {
  private pool: Agent | undefined

  constructor(private readonly opts: UpstreamOptions) {}

  /**
   * Made at the first request, and undici loaded with it: a holdfast that has sent nothing does
   * not carry it (what that saves and costs: docs/performance.md).
   */
  private get agent(): Agent {
    if (this.pool) return this.pool
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const Pool = (require('undici') as typeof import('undici')).Agent
    this.pool = new Pool({
      headersTimeout: this.opts.headersTimeoutMs,
      bodyTimeout: this.opts.bodyTimeoutMs,
      keepAliveTimeout: 30_000,
      connections: 64,
    })
    return this.pool
  }

  /** Send a recorded request; resolves when the provider's headers arrive. */
  async send(
    target: URL,
    method: string,
    headers: Record<string, string | string[]>,
    body: Buffer,
    signal: AbortSignal,
  ): Promise<Dispatcher.ResponseData> {
    return this.agent.request({
      origin: target.origin,
      path: target.pathname + target.search,
      method: method as Dispatcher.HttpMethod,
      headers,
      body,
      signal,
    })
  }

  /**
   * Stream a request the proxy does not record to `target`, unchanged but for the header rules
   * (the same as the recorded path's, both ways), and its answer back; a client that goes away
   * aborts the provider call. `onError` answers when the provider cannot be reached. The answer
   * carries `x-holdfast-passthrough: 1` (PASSTHROUGH_HEADER): a client, or a user reading a 404,
   * can tell a provider's answer holdfast passed on unrecorded from one to a recorded step.
   */
  async passThrough(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    target: URL,
    row: ProviderRow,
    key: string | undefined,
    onError: (err: Error) => void,
  ): Promise<void> {
    const ac = new AbortController()
    const onClose = (): void => {
      if (!res.writableFinished) ac.abort()
    }
    res.on('close', onClose)
    const method = (req.method ?? 'GET') as Dispatcher.HttpMethod
    const headers = cleanHeaders(req.headers, row, key)
    headers.host = target.host
    const h = req.headers
    const bodyless =
      method === 'GET' ||
      method === 'HEAD' ||
      h['content-length'] === '0' ||
      (h['content-length'] === undefined && h['transfer-encoding'] === undefined)
    try {
      const up = await this.agent.request({
        origin: target.origin,
        path: target.pathname + target.search,
        method,
        headers,
        body: bodyless ? null : req,
        signal: ac.signal,
      })
      res.writeHead(up.statusCode, { ...responseHeaders(up.headers), [PASSTHROUGH_HEADER]: '1' })
      if (String(up.headers['content-type'] ?? '').includes('text/event-stream')) res.flushHeaders()
      await pipeline(up.body, res)
    } catch (err) {
      if (ac.signal.aborted) return
      if (res.headersSent) res.destroy()
      else onError(err as Error)
    } finally {
      res.off('close', onClose)
    }
  }

  async close(): Promise<void> {
    await this.pool?.close()
  }
}
