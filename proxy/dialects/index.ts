/**
 * The dialects, registered once: `anthropic` (`/v1/messages`), `openai` (`/v1/chat/completions`)
 * and `responses` (`/v1/responses`). Everything that depends on which dialect a request speaks asks here
 * or asks the Dialect itself. Invariant: one stateless `Dialect` value per wire format; a path
 * that no dialect records is passed through to the row family its headers name.
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

/**
 * The dialect (and so the row family and error envelope) of a provider path no dialect records
 * (`/v1/models`, `HEAD /api/hello`, …): anthropic when the request carries `anthropic-version` or
 * the path is one of its own, else openai.
 */
export function passThroughDialect(
  pathname: string,
  headers: Readonly<Record<string, string | string[] | undefined>>,
): Dialect {
  const own = DIALECTS.find((d) => d.endpoint === pathname || d.countTokensEndpoint === pathname)
  if (own) return own
  const isAnthropic =
    headers['anthropic-version'] !== undefined ||
    pathname === '/api/hello' ||
    pathname.startsWith('/v1/messages') ||
    pathname.startsWith('/v1/complete')
  return isAnthropic ? anthropic : openai
}
