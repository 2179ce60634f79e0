/**
 * Who a request is for and whether it may be served: the `/w/<ws>/a/<agent>` prefix or the
 * `x-holdfast-workspace`/`x-holdfast-agent` headers (defaults from holdfast.yaml), the endpoint
 * kind, and the token / Host / Origin rules (DESIGN §4). Pure: no sockets, no files.
 */
import type { IncomingHttpHeaders } from 'node:http'
import { timingSafeEqual } from 'node:crypto'
import { HoldfastError } from '../core/errors'
import { assertName } from '../core/naming'
import type { DialectName } from '../dialects/types'

export type Endpoint =
  | { kind: 'step'; dialect: DialectName }
  | { kind: 'count_tokens'; dialect: 'anthropic' }
  | { kind: 'pass'; dialect: DialectName }
  | { kind: 'admin' }
  /** holdfast's MCP endpoint for the addressed agent (guarded like admin). */
  | { kind: 'mcp' }
  | { kind: 'unknown' }

export interface Addressed {
  workspace: string
  agent: string
  /** The path with the prefix removed, query kept (`/v1/messages?beta=true`). */
  path: string
  endpoint: Endpoint
}

const header = (h: IncomingHttpHeaders, name: string): string | undefined => {
  const v = h[name]
  return Array.isArray(v) ? v[0] : v
}

function decodeSegment(s: string): string {
  try {
    return decodeURIComponent(s)
  } catch {
    // A malformed escape is kept raw and then refused by the name check.
    return s
  }
}

/** Classify a method and prefix-free path. */
export function classify(method: string, path: string, headers: IncomingHttpHeaders): Endpoint {
  const pathname = path.split('?')[0] ?? ''
  if (pathname.startsWith('/_holdfast/')) return { kind: 'admin' }
  if (pathname === '/mcp') return { kind: 'mcp' }
  if (method === 'POST' && pathname === '/v1/messages') return { kind: 'step', dialect: 'anthropic' }
  if (method === 'POST' && pathname === '/v1/chat/completions') return { kind: 'step', dialect: 'openai' }
  if (method === 'POST' && pathname === '/v1/messages/count_tokens')
    return { kind: 'count_tokens', dialect: 'anthropic' }
  if (method === 'HEAD' && pathname === '/api/hello') return { kind: 'pass', dialect: 'anthropic' }
  if (pathname.startsWith('/v1/')) {
    const anthropic =
      header(headers, 'anthropic-version') !== undefined ||
      pathname.startsWith('/v1/messages') ||
      pathname.startsWith('/v1/complete')
    return { kind: 'pass', dialect: anthropic ? 'anthropic' : 'openai' }
  }
  return { kind: 'unknown' }
}

/** Workspace, agent and endpoint of a request; names are checked (BAD_NAME otherwise). */
export function address(
  method: string,
  url: string,
  headers: IncomingHttpHeaders,
  defaults: { workspace: string; agent: string },
): Addressed {
  let path = url
  let ws = header(headers, 'x-holdfast-workspace')
  let agent = header(headers, 'x-holdfast-agent')
  const m = /^\/w\/([^/?]*)\/a\/([^/?]*)(\/.*|\?.*)?$/.exec(url)
  if (m) {
    ws = decodeSegment(m[1] ?? '')
    agent = decodeSegment(m[2] ?? '')
    path = m[3] ?? '/'
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

/** The hostname of a Host header value, without port or brackets handling beyond IPv6 literals. */
export function hostName(host: string): string {
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1).toLowerCase()
  return (host.split(':')[0] ?? '').toLowerCase()
}

export function isLoopbackHost(host: string | undefined): boolean {
  if (!host) return false
  const name = hostName(host)
  return LOOPBACK_NAMES.has(name) || name.endsWith('.localhost') || /^127\.\d+\.\d+\.\d+$/.test(name)
}

export function isLoopbackBind(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host)
}

export interface Guard {
  token: string | undefined
  /** True when bound off loopback (then a token is set, and any Host is allowed). */
  public: boolean
}

/** The token / Host / Origin rules; throws the refusal, returns when the request may proceed. */
export function guard(g: Guard, endpoint: Endpoint, method: string, headers: IncomingHttpHeaders): void {
  if (!g.public && !isLoopbackHost(header(headers, 'host'))) {
    throw new HoldfastError(
      'HOST_REFUSED',
      `Host ${JSON.stringify(header(headers, 'host') ?? '')} is not a loopback name`,
    )
  }
  if (g.token !== undefined) {
    const given = Buffer.from(header(headers, 'x-holdfast-token') ?? '')
    const want = Buffer.from(g.token)
    if (given.length !== want.length || !timingSafeEqual(given, want)) {
      throw new HoldfastError('TOKEN_REQUIRED', 'this holdfast requires the x-holdfast-token header')
    }
  }
  if (endpoint.kind === 'admin' || endpoint.kind === 'mcp') {
    if (header(headers, 'origin') !== undefined) {
      throw new HoldfastError('ADMIN_REFUSED', 'admin requests with an Origin header are refused')
    }
    const type = header(headers, 'content-type') ?? ''
    if (method !== 'GET' && method !== 'HEAD' && !/^application\/json\b/i.test(type)) {
      throw new HoldfastError(
        'ADMIN_REFUSED',
        'admin requests must have a JSON body (content-type: application/json)',
      )
    }
  }
}
