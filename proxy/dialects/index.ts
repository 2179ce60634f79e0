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
import { pathsOf } from './paths'
import { responses } from './responses'
import type { Dialect, DialectName, RowFamily } from '../core/dialect'

export { anthropic, openai }
export type { DialectRoute, Paths } from './paths'
export type { Dialect, DialectName, Facets, RowFamily } from '../core/dialect'

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

/** The registry's answers about paths, composed from what each dialect declares (paths.ts). */
export const { recordedAt, countsTokensAt, passThroughDialect, routeAt, envelopeAt, PASS_THROUGH_PREFIXES } =
  pathsOf(DIALECTS)
