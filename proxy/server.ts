/**
 * The only socket code: node:http in; it reads the request head, guards it, and hands off — a
 * recorded request (or count_tokens) to the pipeline, the other provider paths (the dialect
 * registry's) to pass-through, the `/_holdfast/` admin surface, the MCP endpoint and the web view
 * (`/ui/`) to theirs; a WebSocket upgrade to http/websocket.ts; what never becomes a request (a
 * parser refusal, CONNECT, a bogus Expect) to edge.ts, which answers on the socket.
 * Invariant: every request is guarded (Host, token, Origin) before anything else; a refused or
 * malformed request changes nothing on disk.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { HoldfastError } from './core/errors'
import type { Dialect } from './core/dialect'
import { headerCarriesToken, requireRowToken, tokenKeyHeaders } from './http/access'
import { address, type Addressed, guard, type Guard } from './http/address'
import { handleAdmin } from './admin/index'
import { BODY_IDLE_MS, BODY_MIN_RATE, readBody } from './http/body'
import type { ServerContext } from './live/context'
import { envelopeFor, onCheckExpectation, onClientError, onConnect } from './http/edge'
import { handle } from './pipeline'
import { sendError } from './http/respond'
import { rowKey, upstreamUrl } from './http/upstream'
import { socketEdge } from './http/websocket'

/** A provider path holdfast does not record: streamed to the dialect's default row, unchanged. */
function handlePass(
  ctx: ServerContext,
  dialect: Dialect,
  a: Addressed,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  tokenCarried: boolean,
): void {
  const row = ctx.config.providers[dialect.rows.name]
  if (!row) {
    sendError(
      res,
      dialect,
      new HoldfastError('NO_PROVIDER_ROW', `holdfast.yaml declares no provider row "${dialect.rows.name}"`),
    )
    return
  }
  let key: string | undefined
  try {
    requireRowToken(tokenCarried, dialect.rows.name, row)
    key = rowKey(dialect.rows.name, row)
  } catch (err) {
    sendError(res, dialect, err)
    return
  }
  const target = upstreamUrl(row, a.path)
  void ctx.upstream.passThrough(req, res, target, row, key, (err) => {
    sendError(
      res,
      dialect,
      new HoldfastError(
        'UPSTREAM_UNREACHABLE',
        `provider row "${dialect.rows.name}" at ${target.origin} could not be reached: ${err.message}`,
      ),
    )
  })
}

/** CORS answer headers for a listed origin (the guard refused every other Origin already). */
function allowOrigin(res: http.ServerResponse, headers: http.IncomingHttpHeaders): void {
  const origin = headers.origin
  if (typeof origin !== 'string') return
  res.setHeader('access-control-allow-origin', origin)
  res.setHeader('vary', 'Origin')
}

/** Headers a page's request to a provider endpoint may carry: the token's three places and the SDKs' own. */
const PREFLIGHT_HEADERS = [
  'content-type',
  'x-holdfast-token',
  'x-api-key',
  'authorization',
  'anthropic-version',
  'anthropic-beta',
]
/** RFC 9110 §5.1 field name (a token). */
const FIELD_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

/**
 * A CORS preflight (the guard let only a listed origin's through, without the token: a browser
 * sends none there): the methods, and the headers asked for plus the ones the token travels in.
 */
function preflight(req: http.IncomingMessage, res: http.ServerResponse): void {
  allowOrigin(res, req.headers)
  res.setHeader('allow', 'GET, HEAD, POST, OPTIONS')
  if (req.headers.origin !== undefined) {
    res.setHeader('access-control-allow-methods', 'GET, HEAD, POST, OPTIONS')
    const asked = String(req.headers['access-control-request-headers'] ?? '')
      .split(',')
      .map((h) => h.trim().toLowerCase())
      .filter((h) => FIELD_NAME.test(h))
    res.setHeader('access-control-allow-headers', [...new Set([...PREFLIGHT_HEADERS, ...asked])].join(', '))
    res.setHeader('access-control-max-age', '600')
  }
  res.writeHead(204)
  res.end()
}

export function createServer(ctx: ServerContext, g: Guard): http.Server {
  const handler = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    const method = req.method ?? 'GET'
    const url = req.url ?? '/'
    let a: Addressed
    try {
      // Node's own check (requireHostHeader) would answer a bare 400: this one is in the envelope.
      if (req.headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor === 1)
        throw new HoldfastError('BAD_HTTP', 'the request has no Host header, which HTTP/1.1 requires')
      a = address(method, url, req.headers, ctx.config.defaults)
      guard(g, a.endpoint, method, req.headers)
    } catch (err) {
      res.setHeader('connection', 'close')
      // A listed origin's page may read why it was refused.
      if (typeof req.headers.origin === 'string' && g.origins.has(req.headers.origin))
        allowOrigin(res, req.headers)
      sendError(res, envelopeFor(url, req.headers), err)
      return
    }
    // The token as the client's API key is holdfast's, not a provider's: whether it came is kept,
    // the header itself goes before anything can forward or record it.
    const asKey = tokenKeyHeaders(g.token, req.headers)
    const tokenCarried = asKey.length > 0 || headerCarriesToken(g.token, req.headers)
    for (const name of asKey) delete req.headers[name]
    if (a.endpoint.kind === 'step' || a.endpoint.kind === 'count_tokens' || a.endpoint.kind === 'pass')
      allowOrigin(res, req.headers)
    switch (a.endpoint.kind) {
      case 'preflight':
        preflight(req, res)
        return
      case 'websocket':
        // Not one holdfast carries (http/websocket.ts carries the Responses endpoint's). Codex falls
        // back to HTTP at once on a 426; anything else costs it five retries.
        sendError(
          res,
          a.endpoint.dialect,
          new HoldfastError(
            'WEBSOCKET_UNSUPPORTED',
            `holdfast does not carry a WebSocket on ${method} ${a.path.split('?')[0]}: send it over HTTP (POST)`,
          ),
        )
        return
      case 'probe':
        res.writeHead(200, { 'content-length': 0 })
        res.end()
        return
      case 'step':
      case 'count_tokens': {
        const limits = {
          bytes: ctx.bodyLimit,
          idleMs: ctx.config.timeouts?.request_body_idle_ms ?? BODY_IDLE_MS,
          minRate: ctx.config.timeouts?.request_body_min_bytes_per_s ?? BODY_MIN_RATE,
        }
        const incoming = {
          kind: a.endpoint.kind,
          dialect: a.endpoint.dialect,
          path: a.path,
          workspace: a.workspace,
          agent: a.agent,
          headers: req.headers,
          tokenCarried,
          body: () => readBody(req, limits, ctx.shutdown.signal),
        }
        void ctx.track(handle(ctx, incoming, res))
        return
      }
      case 'pass':
        handlePass(ctx, a.endpoint.dialect, a, req, res, tokenCarried)
        return
      case 'admin':
        void ctx.track(handleAdmin(ctx, a, req, res), 'admin')
        return
      case 'view':
        // Loaded on the first page; not tracked: a live page's event stream stays open until it closes.
        import('./view')
          .then(({ handleView }) => handleView(ctx, req, res))
          .catch((err: unknown) => sendError(res, undefined, err))
        return
      case 'mcp':
        // Not tracked: a session's event stream stays open until the client or shutdown ends it.
        ctx.mcp.handle(req, res, a.workspace, a.agent).catch((err: unknown) => sendError(res, undefined, err))
        return
      default:
        sendError(
          res,
          envelopeFor(url, req.headers),
          new HoldfastError('NOT_FOUND', `no such endpoint: ${method} ${a.path}`),
        )
    }
  }
  const server = http.createServer({ noDelay: true, keepAlive: true, requireHostHeader: false }, handler)
  // No count of its own (Node's drops every header after the 1 000th, silently): the header size
  // limit bounds how many there can be, and over it the answer is HEADERS_TOO_LARGE (http/edge.ts).
  server.maxHeadersCount = 0
  // The Responses WebSocket is carried (http/websocket.ts); every other upgrade goes to `handler`.
  const sockets = socketEdge(ctx, g, handler)
  server.on('upgrade', sockets.upgrade)
  // A socket is no connection node:http closes: shutdown closes the idle pairs with the idle connections.
  const closeIdle = server.closeIdleConnections.bind(server)
  const closeAll = server.closeAllConnections.bind(server)
  server.closeIdleConnections = () => {
    sockets.closeIdle()
    closeIdle()
  }
  server.closeAllConnections = () => {
    sockets.closeAll()
    closeAll()
  }
  server.on('clientError', onClientError)
  server.on('connect', onConnect)
  server.on('checkExpectation', onCheckExpectation)
  server.headersTimeout = 60_000
  server.requestTimeout = 0 // a long upload or answer is the provider's business, not ours
  return server
}

/** Listen, resolving with the bound address; a port in use is one sentence naming it. */
export function listen(server: http.Server, host: string, port: number): Promise<AddressInfo> {
  return new Promise((resolvePromise, reject) => {
    const onError = (err: NodeJS.ErrnoException): void => {
      server.off('listening', onListening)
      if (err.code === 'EADDRINUSE') reject(new Error(`port ${port} on ${host} is already in use`))
      else if (err.code === 'EADDRNOTAVAIL')
        reject(new Error(`address ${host} is not available on this machine`))
      else reject(err)
    }
    const onListening = (): void => {
      server.off('error', onError)
      resolvePromise(server.address() as AddressInfo)
    }
    server.once('error', onError)
    server.once('listening', onListening)
    server.listen(port, host)
  })
}
