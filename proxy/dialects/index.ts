/**
 * The dialects, registered once: `anthropic` (`/v1/messages`), `openai` (`/v1/chat/completions`)
 * and `responses` (`/v1/responses`). Everything that depends on which dialect a request speaks asks
 * here or asks the Dialect itself, the paths too: which are recorded, counted, passed through or
 * probed, and which error envelope a path takes, composed from what each dialect declares.
 * Invariant: one stateless `Dialect` value per wire format; no module outside `dialects/` knows a
 * provider path.
 */
import { anthropic } from './anthropic'
import { openai } from './openai'
import { responses } from './responses'
import type { Dialect, DialectName, RowFamily } from './types'

export { anthropic, openai }
export type { Dialect, DialectName, Facets, RowFamily } from './types'

/** Every dialect, in the order their endpoints are matched. */
export const DIALECTS: readonly Dialect[] = [anthropic, openai, responses]

/** The row families the dialects are sent to, once each. */
const ROW_FAMILIES: readonly RowFamily[] = [...new Set(DIALECTS.map((d) => d.rows))]

export function dialectByName(name: DialectName): Dialect
export function dialectByName(name: string): Dialect | undefined
export function dialectByName(name: string): Dialect | undefined {
  return DIALECTS.find((d) => d.name === name)
}

/** The dialect names, for messages that list them. */
export const DIALECT_NAMES: readonly DialectName[] = DIALECTS.map((d) => d.name)

/** The row family of a provider row's `dialect:`. */
export function rowFamily(name: RowFamily['name']): RowFamily {
  return ROW_FAMILIES.find((f) => f.name === name) as RowFamily
}

/** The dialect whose recorded endpoint is `pathname`, if any. */
export function recordedAt(pathname: string): Dialect | undefined {
  return DIALECTS.find((d) => d.endpoint === pathname)
}

/** The dialect whose count-tokens endpoint is `pathname`, if any. */
export function countsTokensAt(pathname: string): Dialect | undefined {
  return DIALECTS.find((d) => d.countTokensEndpoint === pathname)
}

type Headers = Readonly<Record<string, string | string[] | undefined>>

/** What a request on a provider path is: a recorded step, a count, passed through, a CORS preflight. */
export type DialectRoute =
  | { kind: 'step'; dialect: Dialect }
  | { kind: 'count_tokens'; dialect: Dialect }
  | { kind: 'pass'; dialect: Dialect }
  /** `OPTIONS` on a provider path: answered by holdfast (CORS preflight), never passed upstream. */
  | { kind: 'preflight'; dialect: Dialect }

/** Every pass-through prefix the dialects declare (`/v1/`), once each. */
export const PASS_THROUGH_PREFIXES: readonly string[] = [
  ...new Set(DIALECTS.flatMap((d) => d.passThrough?.under ?? [])),
]

const isProbe = (pathname: string): boolean =>
  DIALECTS.some((d) => d.passThrough?.probes.includes(pathname) === true)

const claimed = (d: Dialect, pathname: string, headers: Headers): boolean => {
  const c = d.passThrough?.claims
  return (
    c !== undefined &&
    (c.headers.some((h) => headers[h] !== undefined) || c.prefixes.some((p) => pathname.startsWith(p)))
  )
}

/**
 * The dialect (and so the row family and error envelope) of a provider path: the dialect whose
 * endpoint it is, else the one dialect that declares it (under a prefix, or a probe), else among
 * several the one whose claims it matches (anthropic: an `anthropic-version` header, `/v1/messages…`,
 * `/v1/complete…`), else the one that claims nothing (openai). Undefined off the provider paths.
 */
export function passThroughDialect(pathname: string, headers: Headers): Dialect | undefined {
  const own = DIALECTS.find((d) => d.endpoint === pathname || d.countTokensEndpoint === pathname)
  if (own) return own
  const sharing = DIALECTS.filter(
    (d) =>
      d.passThrough !== undefined &&
      (d.passThrough.under.some((u) => pathname.startsWith(u)) || d.passThrough.probes.includes(pathname)),
  )
  if (sharing.length <= 1) return sharing[0]
  return sharing.find((d) => claimed(d, pathname, headers)) ?? sharing.find((d) => !d.passThrough?.claims)
}

/**
 * What a request is to the dialects, undefined when it is nothing to them: POST on an endpoint is a
 * step (or a count), OPTIONS on a provider path a preflight, any other method there passed through;
 * a probe path (`/api/hello`) only on HEAD.
 */
export function routeAt(method: string, pathname: string, headers: Headers): DialectRoute | undefined {
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
  return { kind: 'pass', dialect }
}

/** A prefix without its closing slash (`/v1`) takes the envelope of the paths under it. */
const PREFIX_ROOTS = new Set(PASS_THROUGH_PREFIXES.map((p) => p.replace(/\/$/, '')))

/**
 * The dialect whose error envelope an answer on `pathname` takes: that of the first provider path
 * in it (after any address prefix, `/w/<ws>/a/<agent>`); undefined when there is none (holdfast's own).
 */
export function envelopeAt(pathname: string, headers: Headers = {}): Dialect | undefined {
  for (let at = pathname.indexOf('/'); at >= 0; at = pathname.indexOf('/', at + 1)) {
    const rest = pathname.slice(at)
    const dialect =
      passThroughDialect(rest, headers) ??
      (PREFIX_ROOTS.has(rest) ? passThroughDialect(`${rest}/`, headers) : undefined)
    if (dialect) return dialect
  }
  return undefined
}
