/**
 * Answers to what never reaches the request handler, which Node would otherwise give bare or not
 * at all: a request its parser refuses (a malformed line, a lowercase method, headers over the
 * limit or too slow), `CONNECT` (holdfast is a base URL, not a forward proxy) and an `Expect`
 * other than `100-continue`. Invariant: every answer is in the envelope of the path it was sent
 * to (a provider path: its dialect's; anything else: holdfast's own) with its code in
 * `x-holdfast-error`, and the connection closes after it.
 */
import http from 'node:http'
import type { Duplex } from 'node:stream'
import { HoldfastError } from '../core/errors'
import { type Dialect, envelopeAt } from '../dialects'
import { sendError, toWireError } from './respond'

/**
 * The envelope an answer on this URL takes: holdfast's own on its admin and MCP paths, else the
 * dialect registry's answer (a provider path's dialect, after any address prefix; none: holdfast's).
 */
export function envelopeFor(
  url: string,
  headers: Readonly<Record<string, string | string[] | undefined>> = {},
): Dialect | undefined {
  const pathname = url.split('?')[0] ?? ''
  if (pathname.includes('/_holdfast/') || /\/mcp$/.test(pathname)) return undefined
  return envelopeAt(pathname, headers)
}

/** A whole answer written straight to the socket (the request never became a ServerResponse). */
function answerOnSocket(socket: Duplex, e: HoldfastError, url: string): void {
  const { status, body } = toWireError(e, envelopeFor(url))
  socket.end(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? ''}\r\ncontent-type: application/json\r\n` +
      `content-length: ${body.length}\r\nx-holdfast-error: ${e.code}\r\nconnection: close\r\n\r\n${body.toString()}`,
  )
}

/** The 431's sentence: the limit is Node's (no holdfast.yaml setting), and how to raise it. */
export function headersTooLarge(limit = http.maxHeaderSize): string {
  return (
    `the request headers are over the limit of ${limit} bytes (${Math.round(limit / 1024)} KB, Node's ` +
    `--max-http-header-size; holdfast.yaml has no setting for it): start holdfast with ` +
    `NODE_OPTIONS=--max-http-header-size=<bytes> to raise it`
  )
}

/** Node's own refusals (a malformed request, headers over the limit) in the envelope of the path. */
export function onClientError(err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy()
    return
  }
  // The method as sent, any case (a lowercase one is what the parser refused), then the target.
  const line = /^[A-Za-z]+ (\S+)/.exec(err.rawPacket?.toString('latin1', 0, 2048) ?? '')
  const e =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? new HoldfastError('HEADERS_TOO_LARGE', headersTooLarge())
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new HoldfastError('REQUEST_TIMEOUT', 'the request headers did not arrive in time')
        : err.code === 'HPE_INVALID_METHOD' && line
          ? new HoldfastError(
              'BAD_HTTP',
              `the request is not well-formed HTTP/1.1: ${JSON.stringify(line[0].split(' ')[0])} is not a method (methods are case-sensitive: POST, GET, …)`,
            )
          : new HoldfastError(
              'BAD_HTTP',
              `the request is not well-formed HTTP/1.1 (${err.code ?? err.message})`,
            )
  answerOnSocket(socket, e, line?.[1] ?? '/')
}

/** `CONNECT`: a client that took holdfast for a forward proxy (HTTPS_PROXY); told what to set instead. */
export function onConnect(req: http.IncomingMessage, socket: Duplex): void {
  socket.on('error', () => socket.destroy())
  answerOnSocket(
    socket,
    new HoldfastError(
      'METHOD_NOT_ALLOWED',
      `CONNECT ${req.url ?? ''} is refused: holdfast is not a forward proxy; point the client's base URL at it instead (ANTHROPIC_BASE_URL, OPENAI_BASE_URL: holdfast env prints them)`,
    ),
    req.url ?? '/',
  )
}

/** An `Expect` other than `100-continue`: 417, in the path's envelope (RFC 9110 §10.1.1). */
export function onCheckExpectation(req: http.IncomingMessage, res: http.ServerResponse): void {
  res.setHeader('connection', 'close')
  sendError(
    res,
    envelopeFor(req.url ?? '/', req.headers),
    new HoldfastError(
      'EXPECTATION_FAILED',
      `Expect: ${JSON.stringify(String(req.headers.expect ?? ''))} cannot be met; only 100-continue is`,
    ),
  )
}
