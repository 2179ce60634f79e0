/**
 * Who a request is for and whether it may be served: the `/w/<ws>/a/<agent>` prefix or the
 * `x-holdfast-workspace`/`x-holdfast-agent` headers (defaults from holdfast.yaml), the endpoint
 * kind, and the Host / token / Origin rules (DESIGN §4; the token's own rules: access.ts). Pure: no
 * sockets, no files.
 */
import type { IncomingHttpHeaders } from 'node:http'
import { requireToken, type TokenRule } from './access'
import { HoldfastError } from '../core/errors'
import { assertName } from '../core/naming'
import { type DialectRoute, PASS_THROUGH_PREFIXES, routeAt } from '../dialects'

export type Endpoint =
  /** A provider path (the dialect registry's): a step, a count, pass-through, a CORS preflight, a WebSocket upgrade answered 426. */
  | DialectRoute
  /** `HEAD /` (or an address prefix alone): a client's connectivity probe, answered 200. */
  | { kind: 'probe' }
  | { kind: 'admin' }
  /** holdfast's MCP endpoint for the addressed agent (guarded like admin). */
  | { kind: 'mcp' }
  /** The web view: `/ui/…`, and `GET /` asked for as HTML (proxy/view signs browsers in itself). */
  | { kind: 'view' }
  | { kind: 'unknown' }

export interface Addressed {
  workspace: string
  agent: string
  /** The path with the prefix removed, query kept (a dialect's endpoint and `?beta=true`). */
  path: string
  endpoint: Endpoint
}

const header = (h: IncomingHttpHeaders, name: string): string | undefined => {
  const v = h[name]
  return Array.isArray(v) ? v[0] : v
}

/**
 * A header value or raw path as the UTF-8 it was sent as: Node hands each byte as one latin1
 * character. Bytes that are not UTF-8 are refused (BAD_NAME): they would name a different agent.
 */
export function utf8Of(latin1: string, what: string): string {
  // eslint-disable-next-line no-control-regex
  if (!/[^\x00-\x7f]/.test(latin1)) return latin1
  const bytes = Buffer.from(latin1, 'latin1')
  const text = bytes.toString('utf8')
  if (!Buffer.from(text, 'utf8').equals(bytes))
    throw new HoldfastError('BAD_NAME', `${what} is not valid UTF-8`)
  return text
}

function decodeSegment(s: string, what: string): string {
  const raw = utf8Of(s, what)
  try {
    return decodeURIComponent(raw)
  } catch {
    // A malformed escape is kept raw and then refused by the name check.
    return raw
  }
}

/** Classify a method and prefix-free path. */
export function classify(method: string, path: string, headers: IncomingHttpHeaders): Endpoint {
  const pathname = path.split('?')[0] ?? ''
  if (pathname.startsWith('/_holdfast/')) return { kind: 'admin' }
  if (pathname === '/mcp') return { kind: 'mcp' }
  if (pathname === '/ui' || pathname.startsWith('/ui/')) return { kind: 'view' }
  if (method === 'GET' && pathname === '/' && /\btext\/html\b/.test(header(headers, 'accept') ?? ''))
    return { kind: 'view' }
  if (method === 'HEAD' && pathname === '/') return { kind: 'probe' }
  return routeAt(method, pathname, headers) ?? { kind: 'unknown' }
}

/** Workspace, agent and endpoint of a request; names are checked (BAD_NAME otherwise). */
export function address(
  method: string,
  url: string,
  headers: IncomingHttpHeaders,
  defaults: { workspace: string; agent: string },
): Addressed {
  let path = url
  const wsHeader = header(headers, 'x-holdfast-workspace')
  const agentHeader = header(headers, 'x-holdfast-agent')
  // Decoded as path names are: the UTF-8 the client sent.
  let ws = wsHeader === undefined ? undefined : utf8Of(wsHeader, 'the x-holdfast-workspace header')
  let agent = agentHeader === undefined ? undefined : utf8Of(agentHeader, 'the x-holdfast-agent header')
  const m = /^\/w\/([^/?]*)\/a\/([^/?]*)(\/.*|\?.*)?$/.exec(url)
  if (m) {
    ws = decodeSegment(m[1] ?? '', 'the workspace in the path')
    agent = decodeSegment(m[2] ?? '', 'the agent in the path')
    path = m[3] ?? '/'
  } else if (/^\/w(\/|$)/.test(url)) {
    throw new HoldfastError(
      'NOT_FOUND',
      `${url.split('?')[0]} is not an address: a path prefix is /w/<workspace>/a/<agent> before ${PASS_THROUGH_PREFIXES.map((p) => `${p}…`).join(' or ')}`,
    )
  }
  const endpoint = classify(method, path, headers)
  return {
    workspace: assertName('workspace', ws ?? defaults.workspace),
    agent: assertName('agent', agent ?? defaults.agent),
    path,
    endpoint,
  }
}

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '::1', '[::1]'])

/**
 * The hostname of a Host header value parsed strictly as `host[:port]` (a name, an IPv4 address
 * or a bracketed IPv6 literal, then at most a numeric port; no userinfo, nothing after the port);
 * undefined for anything else.
 */
export function hostName(host: string): string | undefined {
  const m = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?$/.exec(host)
  if (!m || (m[2] !== undefined && Number(m[2]) > 65535)) return undefined
  return (m[1] as string).toLowerCase()
}

export function isLoopbackHost(host: string | undefined): boolean {
  if (!host) return false
  const name = hostName(host)
  if (name === undefined) return false
  return LOOPBACK_NAMES.has(name) || name.endsWith('.localhost') || /^127\.\d+\.\d+\.\d+$/.test(name)
}

export function isLoopbackBind(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host)
}

export interface Guard extends TokenRule {
  /** True when bound off loopback (then the token is configured, and any Host is allowed). */
  public: boolean
  /** Origins whose pages may call the provider endpoints (holdfast.yaml `browser_origins`). */
  origins: ReadonlySet<string>
}

/** `application/json`, with parameters (a charset) allowed, and nothing else. */
const JSON_TYPE = /^application\/json[ \t]*(;.*)?$/i

/** Whether an endpoint speaks a provider's dialect (Origin and OPTIONS rules, error envelopes). */
const isDialectEndpoint = (e: Endpoint): boolean =>
  e.kind === 'step' ||
  e.kind === 'count_tokens' ||
  e.kind === 'pass' ||
  e.kind === 'preflight' ||
  e.kind === 'websocket'

/** A listed origin's CORS preflight: a browser sends it without custom headers, so without the token. */
const listedPreflight = (g: Guard, endpoint: Endpoint, headers: IncomingHttpHeaders): boolean => {
  const origin = header(headers, 'origin')
  return endpoint.kind === 'preflight' && origin !== undefined && g.origins.has(origin)
}

/**
 * The Host / token / Origin rules; throws the refusal, returns when the request may proceed. A
 * provider row's own token rule (`api_key_env`) is checked once the route is known (access.ts).
 */
export function guard(g: Guard, endpoint: Endpoint, method: string, headers: IncomingHttpHeaders): void {
  if (!g.public && !isLoopbackHost(header(headers, 'host'))) {
    throw new HoldfastError(
      'HOST_REFUSED',
      `Host ${JSON.stringify(header(headers, 'host') ?? '')} is not a loopback name`,
    )
  }
  // The view takes the token from its own cookie or ticket (a browser sends no header): proxy/view.
  if (endpoint.kind !== 'view') {
    if (g.strict && !listedPreflight(g, endpoint, headers)) requireToken(g, headers, 'this holdfast')
    else if (endpoint.kind === 'admin') requireToken(g, headers, 'the admin surface (/_holdfast/)')
    else if (endpoint.kind === 'mcp') requireToken(g, headers, 'the MCP endpoint')
  }
  const origin = header(headers, 'origin')
  if (isDialectEndpoint(endpoint) && origin !== undefined && !g.origins.has(origin)) {
    throw new HoldfastError(
      'ORIGIN_REFUSED',
      `requests from web pages (Origin ${JSON.stringify(origin)}) are refused; list the origin in holdfast.yaml browser_origins to allow it`,
    )
  }
  if ((endpoint.kind === 'step' || endpoint.kind === 'count_tokens') && method === 'POST') {
    const type = header(headers, 'content-type')
    if (type === undefined || !JSON_TYPE.test(type)) {
      throw new HoldfastError(
        'BAD_CONTENT_TYPE',
        `a request to ${endpoint.kind === 'step' ? 'a recorded endpoint' : 'count_tokens'} must have content-type: application/json (got ${JSON.stringify(type ?? '')})`,
      )
    }
  }
  // holdfast records the bytes as sent and reads them as JSON: a compressed body it would have to
  // decode (and bound after decoding) before either, so it is refused before it is read.
  const encoding = header(headers, 'content-encoding')?.trim()
  if (
    encoding !== undefined &&
    encoding !== '' &&
    encoding.toLowerCase() !== 'identity' &&
    (endpoint.kind === 'step' ||
      endpoint.kind === 'count_tokens' ||
      endpoint.kind === 'admin' ||
      endpoint.kind === 'mcp')
  ) {
    throw new HoldfastError(
      'UNSUPPORTED_ENCODING',
      `a request body with content-encoding: ${encoding} is refused: holdfast records the body as sent and reads it as JSON, so send it uncompressed`,
    )
  }
  if (endpoint.kind === 'admin' || endpoint.kind === 'mcp') {
    if (origin !== undefined) {
      throw new HoldfastError('ADMIN_REFUSED', 'admin requests with an Origin header are refused')
    }
    const type = header(headers, 'content-type') ?? ''
    if (method !== 'GET' && method !== 'HEAD' && method !== 'DELETE' && !JSON_TYPE.test(type)) {
      throw new HoldfastError(
        'ADMIN_REFUSED',
        'admin requests must have a JSON body (content-type: application/json)',
      )
    }
  }
}
