/**
 * The one module that talks to providers. Recorded requests (a buffered body that may have
 * changed) go through undici 7; everything else streams through http-proxy unchanged.
 * Invariant: what leaves here carries no hop-by-hop or `x-holdfast-*` header, a `Host` and
 * `content-length` that match what is sent, and the row's key when the row names `api_key_env`.
 */
import http from 'node:http'
import https from 'node:https'
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http'
import httpProxy from 'http-proxy'
import { Agent, type Dispatcher } from 'undici'
import { HoldfastError } from './core/errors'
import { rowFamily } from './dialects'
import type { ProviderRow } from './store/config'

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

/** The provider URL for an incoming `/v1/...` path (query kept), by the row's family. */
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
function cleanHeaders(
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
  private readonly agent: Agent
  private readonly proxy: httpProxy
  private readonly httpAgent = new http.Agent({ keepAlive: true })
  private readonly httpsAgent = new https.Agent({ keepAlive: true })

  constructor(opts: UpstreamOptions) {
    this.agent = new Agent({
      headersTimeout: opts.headersTimeoutMs,
      bodyTimeout: opts.bodyTimeoutMs,
      keepAliveTimeout: 30_000,
      connections: 64,
    })
    this.proxy = httpProxy.createProxyServer({ xfwd: false, changeOrigin: true, ignorePath: true })
    // http-proxy aborts the upstream only on the request's 'aborted', which Node no longer emits
    // once the body has been read: a client that goes away must end the provider call here.
    // (Emitted for every request, as passThrough strips `Expect`, which would suppress it.)
    this.proxy.on('proxyReq', (proxyReq, _req, res) => {
      const abort = (): void => {
        if (!res.writableFinished) proxyReq.destroy()
      }
      if (res.destroyed) abort()
      else res.once('close', abort)
    })
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

  /** Stream a request the proxy does not record to `target`, unchanged but for the header rules. */
  passThrough(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    target: URL,
    row: ProviderRow,
    key: string | undefined,
    onError: (err: Error) => void,
  ): void {
    // http-proxy copies req.headers; its 'proxyReq' event is skipped when the client sent
    // `Expect`, so the header rules are applied here, before it sees the request.
    req.headers = cleanHeaders(req.headers, row, key)
    this.proxy.web(
      req,
      res,
      { target: target.href, agent: target.protocol === 'https:' ? this.httpsAgent : this.httpAgent },
      (err) => onError(err),
    )
  }

  async close(): Promise<void> {
    this.proxy.close()
    this.httpAgent.destroy()
    this.httpsAgent.destroy()
    await this.agent.close()
  }
}
