/**
 * The only socket code: node:http in; it reads the request head, guards it, and hands off — a
 * recorded request (or count_tokens) to the pipeline, the rest of `/v1/` to pass-through, the
 * `/_holdfast/` admin surface, the MCP endpoint and the web view (`/ui/`) to theirs.
 * Invariant: every request is guarded (Host, token, Origin) before anything else; a refused or
 * malformed request changes nothing on disk.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Duplex } from 'node:stream'
import { HoldfastError } from './core/errors'
import { passThroughDialect } from './dialects'
import type { Dialect } from './dialects/types'
import { address, type Addressed, guard, type Guard } from './address'
import { handleAdmin } from './admin'
import type { ServerContext } from './context'
import { handle } from './pipeline'
import { sendError, toWireError } from './respond'
import { rowKey, upstreamUrl } from './upstream'

/**
 * Read the whole body, refusing (413) beyond `limit` bytes and (408) when it sends nothing for
 * `idleMs` (a body shorter than its content-length would hold the step open forever).
 */
export function readBody(req: http.IncomingMessage, limit: number, idleMs = 30_000): Promise<Buffer> {
  const declared = Number(req.headers['content-length'])
  if (Number.isFinite(declared) && declared > limit) {
    return Promise.reject(
      new HoldfastError(
        'BODY_TOO_LARGE',
        `the request body (${declared} bytes) is over the ${limit}-byte limit`,
      ),
    )
  }
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    let timer: NodeJS.Timeout | undefined
    const done = (err: Error | undefined, body?: Buffer): void => {
      clearTimeout(timer)
      req.off('data', onData)
      req.off('end', onEnd)
      req.off('error', onError)
      if (err) {
        req.pause() // nothing more is read; the answer closes the connection
        reject(err)
      } else resolve(body as Buffer)
    }
    const arm = (): void => {
      clearTimeout(timer)
      timer = setTimeout(
        () =>
          done(
            new HoldfastError(
              'REQUEST_TIMEOUT',
              `the request body sent nothing for ${idleMs} ms (${size} bytes received${Number.isFinite(declared) ? ` of ${declared}` : ''})`,
            ),
          ),
        idleMs,
      )
    }
    const onData = (chunk: Buffer): void => {
      size += chunk.length
      if (size > limit) {
        done(new HoldfastError('BODY_TOO_LARGE', `the request body is over the ${limit}-byte limit`))
        return
      }
      chunks.push(chunk)
      arm()
    }
    const onEnd = (): void =>
      done(undefined, chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size))
    const onError = (err: Error): void => done(err)
    req.on('data', onData)
    req.on('end', onEnd)
    req.on('error', onError)
    arm()
  })
}

/** A provider path holdfast does not record: streamed to the dialect's default row, unchanged. */
function handlePass(
  ctx: ServerContext,
  dialect: Dialect,
  a: Addressed,
  req: http.IncomingMessage,
  res: http.ServerResponse,
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

/**
 * The envelope an answer on this URL takes: its dialect's on a provider path (after any address
 * prefix), holdfast's own otherwise.
 */
export function envelopeFor(
  url: string,
  headers: Readonly<Record<string, string | string[] | undefined>> = {},
): Dialect | undefined {
  const pathname = url.split('?')[0] ?? ''
  if (pathname.includes('/_holdfast/') || /\/mcp$/.test(pathname)) return undefined
  const at = pathname.search(/\/v1(\/|$)|\/api\/hello$/)
  return at < 0 ? undefined : passThroughDialect(pathname.slice(at), headers)
}

/** Node's own refusals (a malformed request, headers over the limit) in the envelope of the path. */
function onClientError(err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy()
    return
  }
  const line = /^[A-Z]+ (\S+)/.exec(err.rawPacket?.toString('latin1', 0, 2048) ?? '')
  const e =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? new HoldfastError('HEADERS_TOO_LARGE', 'the request headers are over the size limit')
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new HoldfastError('REQUEST_TIMEOUT', 'the request headers did not arrive in time')
        : new HoldfastError(
            'BAD_HTTP',
            `the request is not well-formed HTTP/1.1 (${err.code ?? err.message})`,
          )
  const { status, body } = toWireError(e, envelopeFor(line?.[1] ?? '/'))
  socket.end(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? ''}\r\ncontent-type: application/json\r\n` +
      `content-length: ${body.length}\r\nx-holdfast-error: ${e.code}\r\nconnection: close\r\n\r\n${body.toString()}`,
  )
}

/** CORS answer headers for a listed origin (the guard refused every other Origin already). */
function allowOrigin(res: http.ServerResponse, headers: http.IncomingHttpHeaders): void {
  const origin = headers.origin
  if (typeof origin !== 'string') return
  res.setHeader('access-control-allow-origin', origin)
  res.setHeader('vary', 'Origin')
}

function preflight(req: http.IncomingMessage, res: http.ServerResponse): void {
  allowOrigin(res, req.headers)
  res.setHeader('allow', 'GET, HEAD, POST, OPTIONS')
  if (req.headers.origin !== undefined) {
    res.setHeader('access-control-allow-methods', 'GET, HEAD, POST, OPTIONS')
    const asked = req.headers['access-control-request-headers']
    if (typeof asked === 'string') res.setHeader('access-control-allow-headers', asked)
    res.setHeader('access-control-max-age', '600')
  }
  res.writeHead(204)
  res.end()
}

export function createServer(ctx: ServerContext, g: Guard): http.Server {
  const server = http.createServer({ noDelay: true, keepAlive: true }, (req, res) => {
    const method = req.method ?? 'GET'
    const url = req.url ?? '/'
    let a: Addressed
    try {
      a = address(method, url, req.headers, ctx.config.defaults)
      guard(g, a.endpoint, method, req.headers)
    } catch (err) {
      res.setHeader('connection', 'close')
      sendError(res, envelopeFor(url, req.headers), err)
      return
    }
    if (a.endpoint.kind === 'step' || a.endpoint.kind === 'count_tokens' || a.endpoint.kind === 'pass')
      allowOrigin(res, req.headers)
    switch (a.endpoint.kind) {
      case 'preflight':
        preflight(req, res)
        return
      case 'probe':
        res.writeHead(200, { 'content-length': 0 })
        res.end()
        return
      case 'step':
      case 'count_tokens': {
        const limit = ctx.bodyLimit
        const idleMs = ctx.config.timeouts?.request_body_idle_ms ?? 30_000
        const incoming = {
          kind: a.endpoint.kind,
          dialect: a.endpoint.dialect,
          path: a.path,
          workspace: a.workspace,
          agent: a.agent,
          headers: req.headers,
          body: () => readBody(req, limit, idleMs),
        }
        void ctx.track(handle(ctx, incoming, res))
        return
      }
      case 'pass':
        handlePass(ctx, a.endpoint.dialect, a, req, res)
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
  })
  server.on('clientError', onClientError)
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
