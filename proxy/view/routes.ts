/**
 * The view's URLs, parsed: which page (or stream, raw file, form) a path names, with its names
 * decoded and checked as names, and its step number. Pure. Invariant: a path that names no page is
 * `undefined` (answered NOT_FOUND); a name that is not a name is refused (BAD_NAME) before any read.
 */
import { assertName, parseStep } from '../core/naming'
import { META_FILE, REQUEST_FILE, RESPONSE_FILES } from '../core/layout'

export type Route =
  | { page: 'root' }
  | { page: 'home' }
  | { page: 'asset'; name: string }
  | { page: 'statusline' }
  | { page: 'workspace'; ws: string; live: boolean }
  | { page: 'agent'; ws: string; agent: string; live: boolean }
  | { page: 'step'; ws: string; agent: string; n: number }
  | { page: 'raw'; ws: string; agent: string; n: number; file: string }
  | { page: 'fork'; ws: string; agent: string; n: number }
  | { page: 'cohort'; ws: string; agent: string; n: number; live: boolean }

const RAW_FILES = new Set<string>([REQUEST_FILE, META_FILE, ...RESPONSE_FILES])

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment // a malformed escape is refused by the name check
  }
}

const wsName = (s: string): string => assertName('workspace', decode(s))
const agentName = (s: string): string => assertName('agent', decode(s))

/** The route of a pathname (no query), or undefined. */
export function routeOf(pathname: string): Route | undefined {
  if (pathname === '/') return { page: 'root' }
  if (pathname === '/ui' || pathname === '/ui/') return { page: 'home' }
  let m = /^\/ui\/assets\/([A-Za-z0-9.-]+)$/.exec(pathname)
  if (m) return { page: 'asset', name: m[1] as string }
  if (pathname === '/ui/api/statusline') return { page: 'statusline' }
  m = /^\/ui\/w\/([^/]+)(\/live)?\/?$/.exec(pathname)
  if (m) return { page: 'workspace', ws: wsName(m[1] as string), live: m[2] !== undefined }
  m = /^\/ui\/w\/([^/]+)\/a\/([^/]+)(\/live)?\/?$/.exec(pathname)
  if (m)
    return {
      page: 'agent',
      ws: wsName(m[1] as string),
      agent: agentName(m[2] as string),
      live: m[3] !== undefined,
    }
  m = /^\/ui\/w\/([^/]+)\/a\/([^/]+)\/s\/(\d+)(\/fork|\/raw\/([^/]+))?\/?$/.exec(pathname)
  if (m) {
    const n = parseStep((m[3] as string).padStart(3, '0'))
    if (n === undefined) return undefined
    const base = { ws: wsName(m[1] as string), agent: agentName(m[2] as string), n }
    if (m[4] === '/fork') return { page: 'fork', ...base }
    if (m[5] !== undefined) {
      const file = decode(m[5])
      return RAW_FILES.has(file) ? { page: 'raw', ...base, file } : undefined
    }
    return { page: 'step', ...base }
  }
  m = /^\/ui\/w\/([^/]+)\/cohort\/([^/]+)@(\d+)(\/live)?\/?$/.exec(pathname)
  if (m) {
    const n = parseStep((m[3] as string).padStart(3, '0'))
    if (n === undefined) return undefined
    return {
      page: 'cohort',
      ws: wsName(m[1] as string),
      agent: agentName(m[2] as string),
      n,
      live: m[4] !== undefined,
    }
  }
  return undefined
}
