/**
 * The WebSocket edge (DESIGN §13, fifth round, §4): an upgrade of a dialect endpoint that has
 * frames (the Responses WebSocket, `GET …/v1/responses`) is guarded as an HTTP request is (loopback
 * `Host`, the token's rules, `Origin` refused), then the provider's socket is opened first, and
 * only once it answered 101 is the client's upgrade accepted (`ws`, permessage-deflate as
 * offered, frames up to holdfast.yaml `limits.body_bytes`), with the 101 headers Codex reads
 * copied; the pair is carried by proxy/socket. Every other upgrade, and one whose row says
 * `websocket: false` or whose provider refused or could not be reached, is answered over HTTP by
 * the request handler (426 for a provider path, so the client falls back at once).
 * Invariant: nothing reaches the provider before the guard passed; a client socket is accepted
 * only with its provider socket open, and a provider socket never outlives its client's.
 */
import http from 'node:http'
import type { Duplex } from 'node:stream'
import type { WebSocket, WebSocketServer } from 'ws'
import { HoldfastError } from '../core/errors'
import type { ServerContext } from '../live/context'
import { SocketSession } from '../socket/session'
import { headerCarriesToken, requireRowToken, tokenKeyHeaders } from './access'
import { address, type Addressed, guard, type Guard } from './address'
import { sendError } from './respond'
import { rowKey, upstreamUrl } from './upstream'
import { openUpstreamSocket, socketHeaders } from './upstream-socket'

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void

/** The provider's 101 headers Codex reads (its responses_websocket client), copied onto holdfast's 101. */
export const UPGRADE_HEADERS = [
  'x-codex-turn-state',
  'x-models-etag',
  'x-reasoning-included',
  'openai-model',
  'x-codex-websocket-max-message-bytes',
] as const

/** Frames a provider may send, whatever the client's limit (a whole response, its output included). */
const PROVIDER_MAX_PAYLOAD = 256 * 1024 * 1024

export interface SocketEdge {
  upgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): void
  /** Close the pairs no step is in flight on (shutdown begins; the others close once their step ends). */
  closeIdle(): void
  closeAll(): void
}

/** Answer an upgrade request over HTTP, as the request handler would (the socket closes after it). */
function overHttp(
  req: http.IncomingMessage,
  socket: Duplex,
  answer: (res: http.ServerResponse) => void,
): void {
  const res = new http.ServerResponse(req)
  res.shouldKeepAlive = false
  res.assignSocket(socket as import('node:net').Socket)
  res.on('finish', () => {
    res.detachSocket(socket as import('node:net').Socket)
    socket.end()
  })
  answer(res)
}

/** Headers without the handshake's own (`Upgrade`, `Connection`, `Sec-WebSocket-*`): what a step's record keeps. */
function withoutHandshake<T extends Record<string, unknown>>(headers: T): T {
  const out = { ...headers }
  for (const name of Object.keys(out))
    if (name.startsWith('sec-websocket-') || name === 'upgrade' || name === 'connection') delete out[name]
  return out
}

const offersDeflate = (req: http.IncomingMessage): boolean =>
  /\bpermessage-deflate\b/i.test(String(req.headers['sec-websocket-extensions'] ?? ''))

export function socketEdge(ctx: ServerContext, g: Guard, handler: Handler): SocketEdge {
  const sessions = new Set<SocketSession>()
  /** The 101 headers to add per upgrade request (ws emits `headers` with the request). */
  const extra = new WeakMap<http.IncomingMessage, string[]>()
  let server: WebSocketServer | undefined
  let numbered = 0
  const wss = (): WebSocketServer => {
    if (server) return server
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { WebSocketServer: Server } = require('ws') as typeof import('ws')
    server = new Server({ noServer: true, perMessageDeflate: true, maxPayload: ctx.bodyLimit })
    server.on('headers', (headers: string[], req: http.IncomingMessage) =>
      headers.push(...(extra.get(req) ?? [])),
    )
    return server
  }

  const refuse = (req: http.IncomingMessage, socket: Duplex, a: Addressed, why: string): void =>
    overHttp(req, socket, (res) =>
      sendError(
        res,
        a.endpoint.kind === 'websocket' ? a.endpoint.dialect : undefined,
        new HoldfastError(
          'WEBSOCKET_UNSUPPORTED',
          `${why}; send it over HTTP (POST ${a.path.split('?')[0]})`,
        ),
      ),
    )

  async function carry(req: http.IncomingMessage, socket: Duplex, head: Buffer, a: Addressed): Promise<void> {
    if (a.endpoint.kind !== 'websocket') return
    const dialect = a.endpoint.dialect
    const frames = dialect.socket as NonNullable<typeof dialect.socket>
    const asKey = tokenKeyHeaders(g.token, req.headers)
    const tokenCarried = asKey.length > 0 || headerCarriesToken(g.token, req.headers)
    for (const name of asKey) delete req.headers[name]
    const provider = dialect.rows.name
    const row = ctx.config.providers[provider]
    let key: string | undefined
    try {
      if (ctx.closing) throw new HoldfastError('SHUTTING_DOWN', 'holdfast is shutting down; retry shortly')
      if (!row)
        throw new HoldfastError('NO_PROVIDER_ROW', `holdfast.yaml declares no provider row "${provider}"`)
      requireRowToken(tokenCarried, provider, row)
      key = rowKey(provider, row)
    } catch (err) {
      overHttp(req, socket, (res) => sendError(res, dialect, err))
      return
    }
    if (row.websocket === false)
      return refuse(req, socket, a, `provider row "${provider}" is set websocket: false`)
    const url = upstreamUrl(row, a.path)
    const gone = new AbortController()
    const onGone = (): void => gone.abort()
    socket.once('close', onGone)
    const opened = await openUpstreamSocket(
      url,
      socketHeaders(req.headers, row, key),
      { deflate: offersDeflate(req), maxPayload: PROVIDER_MAX_PAYLOAD },
      gone.signal,
    )
    socket.off('close', onGone)
    if (!opened.ok) {
      if (!gone.signal.aborted)
        refuse(req, socket, a, `provider row "${provider}" did not take the WebSocket: ${opened.reason}`)
      return
    }
    const upstream = opened.socket
    if (gone.signal.aborted || socket.destroyed) {
      upstream.terminate()
      return
    }
    const copied: string[] = []
    for (const name of UPGRADE_HEADERS) {
      const v = opened.headers[name]
      for (const one of Array.isArray(v) ? v : v === undefined ? [] : [v]) copied.push(`${name}: ${one}`)
    }
    extra.set(req, copied)
    let accepted = false
    // A handshake ws refuses (a bad key or version) is answered 400 by ws; the provider's socket goes.
    socket.once('close', () => {
      if (!accepted) upstream.terminate()
    })
    wss().handleUpgrade(req, socket, head, (client: WebSocket) => {
      accepted = true
      const headers = withoutHandshake(req.headers)
      const session = new SocketSession(
        ctx,
        {
          n: ++numbered,
          dialect,
          frames,
          path: a.path,
          workspace: a.workspace,
          agent: a.agent,
          headers,
          tokenCarried,
          provider,
          row,
          key,
          url,
          upgrade: withoutHandshake(opened.headers),
        },
        client,
        upstream,
        () => sessions.delete(session),
      )
      sessions.add(session)
    })
  }

  return {
    upgrade(req, socket, head) {
      socket.on('error', () => socket.destroy())
      let a: Addressed
      try {
        a = address(req.method ?? 'GET', req.url ?? '/', req.headers, ctx.config.defaults)
        guard(g, a.endpoint, req.method ?? 'GET', req.headers)
      } catch {
        // Refused as the request handler refuses it, in the envelope of its path.
        overHttp(req, socket, (res) => handler(req, res))
        return
      }
      const terminated =
        a.endpoint.kind === 'websocket' &&
        a.endpoint.dialect.socket !== undefined &&
        a.path.split('?')[0] === a.endpoint.dialect.endpoint
      if (!terminated) {
        overHttp(req, socket, (res) => handler(req, res))
        return
      }
      void ctx.track(carry(req, socket, head, a), 'admin').catch((err: unknown) => {
        ctx.log.error({ err: String(err) }, 'a WebSocket upgrade failed')
        socket.destroy()
      })
    },
    closeIdle() {
      for (const s of sessions) if (!s.busy) s.close()
    },
    closeAll() {
      for (const s of sessions) s.close()
    },
  }
}
