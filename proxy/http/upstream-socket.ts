/**
 * The provider's side of a WebSocket (the Responses WebSocket Codex opens): one upstream socket
 * per client socket, opened to the row's URL for the client's path with the client's headers
 * (the header rules of upstream.ts: no hop-by-hop, no `x-holdfast-*`, the row's key) minus the
 * handshake's own `Sec-WebSocket-*`, permessage-deflate offered when the client offered it.
 * Invariant: it resolves once, with the open socket and the headers of the provider's 101, or with
 * why there is none (the provider answered the upgrade with another status, or could not be
 * reached in time); a socket that did not open is never left open.
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http'
import type { WebSocket } from 'ws'
import type { ProviderRow } from '../store/config'
import { cleanHeaders } from './upstream'

/** How long the provider has to answer the upgrade (the client's own connect timeout is its business). */
export const SOCKET_CONNECT_MS = 30_000

export type Opened =
  | { ok: true; socket: WebSocket; headers: IncomingHttpHeaders }
  | { ok: false; status: number | null; reason: string }

export interface SocketOptions {
  /** Offer permessage-deflate (the client offered it). */
  deflate: boolean
  /** The largest message accepted from the provider. */
  maxPayload: number
  connectMs?: number
}

/** The ws:// or wss:// URL of a provider's http(s) URL. */
export function socketUrl(target: URL): URL {
  const u = new URL(target.href)
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:'
  return u
}

/** The headers the upstream upgrade carries: the client's by the rules of upstream.ts, minus the handshake's. */
export function socketHeaders(
  client: IncomingHttpHeaders,
  row: ProviderRow,
  key: string | undefined,
): Record<string, string | string[]> {
  const out = cleanHeaders(client, row, key)
  for (const name of Object.keys(out))
    if (name === 'host' || name.startsWith('sec-websocket-')) delete out[name]
  return out
}

/** Open the provider's socket; `signal` (the client went away) closes it while it opens. */
export function openUpstreamSocket(
  target: URL,
  headers: Record<string, string | string[]>,
  opts: SocketOptions,
  signal: AbortSignal,
): Promise<Opened> {
  // Loaded on the first upgrade: a holdfast no client opens a socket to does not carry it.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { WebSocket: Client } = require('ws') as typeof import('ws')
  return new Promise<Opened>((resolve) => {
    let upgrade: IncomingHttpHeaders = {}
    let done = false
    const settle = (o: Opened): void => {
      if (done) return
      done = true
      signal.removeEventListener('abort', onAbort)
      resolve(o)
    }
    const socket = new Client(socketUrl(target), {
      headers,
      perMessageDeflate: opts.deflate,
      maxPayload: opts.maxPayload,
      handshakeTimeout: opts.connectMs ?? SOCKET_CONNECT_MS,
    })
    const onAbort = (): void => {
      socket.terminate()
      settle({ ok: false, status: null, reason: 'the client went away before the provider answered' })
    }
    signal.addEventListener('abort', onAbort)
    if (signal.aborted) onAbort()
    socket.once('upgrade', (res: IncomingMessage) => (upgrade = res.headers))
    socket.once('open', () => settle({ ok: true, socket, headers: upgrade }))
    socket.once('unexpected-response', (req, res: IncomingMessage) => {
      res.resume()
      req.destroy()
      settle({
        ok: false,
        status: res.statusCode ?? null,
        reason: `the provider answered the upgrade ${res.statusCode ?? '?'}`,
      })
    })
    socket.on('error', (err) => {
      socket.terminate()
      settle({ ok: false, status: null, reason: `the provider could not be reached: ${err.message}` })
    })
  })
}
