/**
 * The dialects by name: `anthropic` (`/v1/messages`) and `openai` (`/v1/chat/completions`).
 * Invariant: one `Dialect` value per wire format, shared and stateless. An unknown name is undefined.
 */
import { anthropic } from './anthropic'
import { openai } from './openai'
import type { Dialect, DialectName } from './types'

export { anthropic, openai }
export type { Dialect, DialectName, Facets } from './types'

const BY_NAME: Readonly<Record<DialectName, Dialect>> = { anthropic, openai }

export function dialectByName(name: DialectName): Dialect
export function dialectByName(name: string): Dialect | undefined
export function dialectByName(name: string): Dialect | undefined {
  return Object.hasOwn(BY_NAME, name) ? BY_NAME[name as DialectName] : undefined
}
