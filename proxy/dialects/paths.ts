/**
 * Which paths are whose, composed from what each dialect declares (its endpoints and its
 * `passThrough`): which requests are recorded, counted, passed through or probed, and which error
 * envelope a path takes. Invariant: pure over the list it is given; exact paths (an endpoint, a
 * probe) win over prefixes, and a path several dialects' prefixes cover goes by their claims.
 */
import type { Dialect } from '../core/dialect'

type Headers = Readonly<Record<string, string | string[] | undefined>>

/**
 * What a request on a provider path is: a recorded step, a count, passed through, a CORS preflight,
 * a WebSocket upgrade.
 */
export type DialectRoute =
  | { kind: 'step'; dialect: Dialect }
  | { kind: 'count_tokens'; dialect: Dialect }
  | { kind: 'pass'; dialect: Dialect }
  /** `OPTIONS` on a provider path: answered by holdfast (CORS preflight), never passed upstream. */
  | { kind: 'preflight'; dialect: Dialect }
  /** A WebSocket upgrade of a provider path (Codex's `GET /v1/responses`): answered 426, never passed on. */
  | { kind: 'websocket'; dialect: Dialect }

export interface Paths {
  /** The dialect whose recorded endpoint is `pathname`, if any. */
  recordedAt(pathname: string): Dialect | undefined
  /** The dialect whose count-tokens endpoint is `pathname`, if any. */
  countsTokensAt(pathname: string): Dialect | undefined
  /**
   * The dialect (and so the row family and error envelope) of a provider path: the dialect whose
   * endpoint or probe it is, else the one dialect with a prefix over it, else among several the
   * one whose claims match (anthropic: an `anthropic-version` header, `/v1/messages…`), else the
   * first that claims nothing (openai), else the first. Undefined off the provider paths.
   */
  passThroughDialect(pathname: string, headers: Headers): Dialect | undefined
  /**
   * What a request is to the dialects, undefined when it is nothing to them: POST on an endpoint
   * is a step (or a count), OPTIONS on a provider path a preflight, GET with `Upgrade: websocket`
   * there a WebSocket upgrade, any other method there passed through; a probe path (`/api/hello`)
   * only on HEAD.
   */
  routeAt(method: string, pathname: string, headers: Headers): DialectRoute | undefined
  /**
   * The dialect whose error envelope an answer on `pathname` takes: that of the first provider
   * path in it (after any address prefix, `/w/<ws>/a/<agent>`; a prefix without its closing slash,
   * `/v1`, counts as under it); undefined when there is none (holdfast's own envelope).
   */
  envelopeAt(pathname: string, headers?: Headers): Dialect | undefined
  /** Every pass-through prefix the dialects declare (`/v1/`), once each, in their order. */
  readonly PASS_THROUGH_PREFIXES: readonly string[]
}

/** Whether `pathname` is `prefix` or under it by whole segments (`/v1/complete` is not `/v1/completions`). */
const underSegment = (pathname: string, prefix: string): boolean =>
  pathname === prefix || pathname.startsWith(prefix.endsWith('/') ? prefix : `${prefix}/`)

const claimed = (d: Dialect, pathname: string, headers: Headers): boolean => {
  const c = d.passThrough?.claims
  return (
    c !== undefined &&
    (c.headers.some((h) => headers[h] !== undefined) || c.prefixes.some((p) => underSegment(pathname, p)))
  )
}

/** The path answers of a list of dialects (the registry's: `pathsOf(DIALECTS)`). */
export function pathsOf(dialects: readonly Dialect[]): Paths {
  const prefixes = [...new Set(dialects.flatMap((d) => d.passThrough?.under ?? []))]
  const roots = new Set(prefixes.map((p) => p.replace(/\/$/, '')))
  const isProbe = (pathname: string): boolean =>
    dialects.some((d) => d.passThrough?.probes.includes(pathname) === true)
  const recordedAt = (pathname: string): Dialect | undefined => dialects.find((d) => d.endpoint === pathname)
  const countsTokensAt = (pathname: string): Dialect | undefined =>
    dialects.find((d) => d.countTokensEndpoint === pathname)

  const passThroughDialect = (pathname: string, headers: Headers): Dialect | undefined => {
    const own = dialects.find(
      (d) =>
        d.endpoint === pathname ||
        d.countTokensEndpoint === pathname ||
        d.passThrough?.probes.includes(pathname),
    )
    if (own) return own
    const sharing = dialects.filter((d) => d.passThrough?.under.some((u) => pathname.startsWith(u)) === true)
    if (sharing.length <= 1) return sharing[0]
    return (
      sharing.find((d) => claimed(d, pathname, headers)) ??
      sharing.find((d) => !d.passThrough?.claims) ??
      sharing[0]
    )
  }

  return {
    recordedAt,
    countsTokensAt,
    passThroughDialect,
    routeAt(method, pathname, headers) {
      if (method === 'POST') {
        const recorded = recordedAt(pathname)
        if (recorded) return { kind: 'step', dialect: recorded }
        const counted = countsTokensAt(pathname)
        if (counted) return { kind: 'count_tokens', dialect: counted }
      }
      const dialect = passThroughDialect(pathname, headers)
      if (!dialect) return undefined
      if (method === 'OPTIONS') return { kind: 'preflight', dialect }
      if (method !== 'HEAD' && isProbe(pathname)) return undefined
      if (method === 'GET' && /\bwebsocket\b/i.test(String(headers.upgrade ?? '')))
        return { kind: 'websocket', dialect }
      return { kind: 'pass', dialect }
    },
    envelopeAt(pathname, headers = {}) {
      for (let at = pathname.indexOf('/'); at >= 0; at = pathname.indexOf('/', at + 1)) {
        const rest = pathname.slice(at)
        const dialect =
          passThroughDialect(rest, headers) ??
          (roots.has(rest) ? passThroughDialect(`${rest}/`, headers) : undefined)
        if (dialect) return dialect
      }
      return undefined
    },
    PASS_THROUGH_PREFIXES: prefixes,
  }
}
