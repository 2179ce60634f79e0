/**
 * The view's URLs as one route list (after Hono's: rows of a path pattern, here with their names):
 * each pattern both parses a pathname (`routeOf`) and builds a path (`pathOf`, which links.ts and the
 * page table use), so a page's links and its parsing cannot drift apart. A `:ws` or `:agent` segment
 * is decoded and checked as a name, `:n` is a step number (`7` or `007`), `:file` a recorded file of
 * a step, `:name` an asset. Pure. Invariant: a path that names no route is `undefined` (answered
 * NOT_FOUND); a name that is not a name is refused (BAD_NAME) before any read.
 */
import { assertName, formatStep, parseStep } from '../core/naming'
import { META_FILE, REQUEST_FILE, RESPONSE_FILES } from '../core/layout'

/**
 * Every route, in match order. `live`: the route also answers at `<path>/live` (its page's event
 * stream); `exact`: no trailing slash is allowed.
 */
export const ROUTES = {
  root: { pattern: '/', exact: true },
  home: { pattern: '/ui/' },
  asset: { pattern: '/ui/assets/:name', exact: true },
  statusline: { pattern: '/ui/api/statusline', exact: true },
  workspace: { pattern: '/ui/w/:ws', live: true },
  agent: { pattern: '/ui/w/:ws/a/:agent', live: true },
  step: { pattern: '/ui/w/:ws/a/:agent/s/:n' },
  fork: { pattern: '/ui/w/:ws/a/:agent/s/:n/fork' },
  raw: { pattern: '/ui/w/:ws/a/:agent/s/:n/raw/:file' },
  cohort: { pattern: '/ui/w/:ws/cohort/:agent@:n', live: true },
} as const

/** The suffix of a live route's event stream. */
export const LIVE = '/live'

export type RouteName = keyof typeof ROUTES

interface Kinds {
  ws: string
  agent: string
  n: number
  file: string
  name: string
}

type Cut<S extends string> = S extends `${infer K}/${infer R}`
  ? [K, R]
  : S extends `${infer K}@${infer R}`
    ? [K, R]
    : [S, '']
type Names<P extends string> = P extends `${string}:${infer Rest}`
  ? Cut<Rest> extends [infer K extends string, infer R extends string]
    ? K | Names<R>
    : never
  : never

/** The typed parameters of a pattern: `/ui/w/:ws/a/:agent/s/:n` → `{ ws, agent, n: number }`. */
export type ParamsOf<P extends string> = { [K in Names<P> & keyof Kinds]: Kinds[K] }
export type Params<K extends RouteName> = ParamsOf<(typeof ROUTES)[K]['pattern']>
type LiveOf<K extends RouteName> = (typeof ROUTES)[K] extends { live: true } ? { live: boolean } : unknown

/** A parsed route: its name as `page`, its parameters, and for a live route whether it is the stream. */
export type Route = { [K in RouteName]: { page: K } & Params<K> & LiveOf<K> }[RouteName]

const RAW_FILES = new Set<string>([REQUEST_FILE, META_FILE, ...RESPONSE_FILES])

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment // a malformed escape is refused by the name check
  }
}

const seg = encodeURIComponent

interface Kind {
  /** The segment's pattern (one capture). */
  re: string
  /** The value, undefined for no route; throws BAD_NAME for a name that is not a name. */
  parse(s: string): string | number | undefined
  build(v: string | number): string
}

/** The parameter kinds, in the order they are checked (a bad step number is no route before any name is checked). */
const KINDS: { [K in keyof Kinds]: Kind } = {
  n: { re: '(\\d+)', parse: (s) => parseStep(s.padStart(3, '0')), build: (v) => formatStep(Number(v)) },
  ws: { re: '([^/]+)', parse: (s) => assertName('workspace', decode(s)), build: (v) => seg(String(v)) },
  agent: { re: '([^/]+)', parse: (s) => assertName('agent', decode(s)), build: (v) => seg(String(v)) },
  file: {
    re: '([^/]+)',
    parse: (s) => (RAW_FILES.has(decode(s)) ? decode(s) : undefined),
    build: (v) => seg(String(v)),
  },
  name: { re: '([A-Za-z0-9.-]+)', parse: (s) => s, build: (v) => seg(String(v)) },
}
const ORDER = Object.keys(KINDS) as (keyof Kinds)[]

const PARAM = /:([a-z]+)/g
const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')

interface Compiled {
  page: RouteName
  re: RegExp
  names: (keyof Kinds)[]
  live: boolean
}

function compile(page: RouteName): Compiled {
  const r: { pattern: string; live?: boolean; exact?: boolean } = ROUTES[page]
  const base = r.exact ? r.pattern : r.pattern.replace(/\/$/, '')
  const names: (keyof Kinds)[] = []
  const body = base
    .split(/(:[a-z]+)/)
    .map((part) => {
      if (!part.startsWith(':')) return escape(part)
      const k = part.slice(1) as keyof Kinds
      names.push(k)
      return KINDS[k].re
    })
    .join('')
  const live = r.live === true
  return {
    page,
    re: new RegExp(`^${body}${live ? `(${escape(LIVE)})?` : ''}${r.exact ? '' : '\\/?'}$`),
    names,
    live,
  }
}

const COMPILED = (Object.keys(ROUTES) as RouteName[]).map(compile)

/** The route of a pathname (no query), or undefined. */
export function routeOf(pathname: string): Route | undefined {
  for (const c of COMPILED) {
    const m = c.re.exec(pathname)
    if (!m) continue
    const out: Record<string, unknown> = { page: c.page }
    for (const k of ORDER) {
      const i = c.names.indexOf(k)
      if (i < 0) continue
      const v = KINDS[k].parse(m[i + 1] as string)
      if (v === undefined) return undefined
      out[k] = v
    }
    if (c.live) out.live = m[c.names.length + 1] !== undefined
    return out as Route
  }
  return undefined
}

/** A route's path, each parameter encoded as its pattern's segment (a name as one path segment). */
export function pathOf<K extends RouteName>(page: K, params: Params<K>): string {
  const values = params as Partial<Record<keyof Kinds, string | number>>
  return ROUTES[page].pattern.replace(PARAM, (_, k: keyof Kinds) =>
    KINDS[k].build(values[k] as string | number),
  )
}
