/**
 * Why a step's cached prefix moved: compare two recorded requests in cache order (tools, system,
 * transcript) and name what moved and the first path where they differ, with the hold's own
 * equivalences (`cache_control` ignored, a string content equal to one text block). Pure. An
 * absent previous step (a first step) moves nothing: the prefix is new.
 */
import type { Dialect } from '../dialects/types'
import { isObject, type Json, type JsonObject, sameIgnoringCacheControl, withoutCacheControl } from './json'

export interface PrefixMoves {
  model: boolean
  tools: boolean
  system: boolean
  head: boolean
  /** Cache-keying fields (and headers) that moved, by name. */
  keying: string[]
  /** JSON path of the first difference in cache order (`tools[2].description`), or null. */
  firstDifference: string | null
}

/** The first path where `a` and `b` differ, depth first, or null when equal. */
export function firstDifference(a: Json | undefined, b: Json | undefined, at: string): string | null {
  if (a === undefined || b === undefined) return a === b ? null : at
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const d = firstDifference(a[i], b[i], `${at}[${i}]`)
      if (d) return d
    }
    return a.length === b.length ? null : `${at}[${Math.min(a.length, b.length)}]`
  }
  if (isObject(a) && isObject(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])]
    for (const k of keys) {
      const d = firstDifference(
        a[k],
        b[k],
        /^[A-Za-z_][A-Za-z0-9_]*$/.test(k) ? `${at}.${k}` : `${at}[${JSON.stringify(k)}]`,
      )
      if (d) return d
    }
    return null
  }
  return a === b ? null : at
}

/** A message with a string content as the one text block it stands for (the provider caches them alike). */
function asBlocks(m: Json): Json {
  if (!isObject(m) || typeof m.content !== 'string') return m
  return { ...m, content: [{ type: 'text', text: m.content }] }
}

/**
 * What moved between the previous request and this one. The first difference is searched in the
 * transcript only up to the previous transcript's length: a grown conversation is not a move.
 */
export function prefixMoves(
  dialect: Dialect,
  prev: JsonObject,
  cur: JsonObject,
  prevHeaders: Readonly<Record<string, string | undefined>>,
  curHeaders: Readonly<Record<string, string | undefined>>,
): PrefixMoves {
  const p = dialect.facets(prev, prevHeaders)
  const c = dialect.facets(cur, curHeaders)
  const keying = [...new Set([...Object.keys(p.keying), ...Object.keys(c.keying)])].filter(
    (k) => !sameIgnoringCacheControl(p.keying[k], c.keying[k]),
  )
  const strip = (v: Json | undefined): Json | undefined =>
    v === undefined ? undefined : withoutCacheControl(v)
  const prevMessages = dialect.transcript(prev).map(asBlocks)
  const curMessages = dialect.transcript(cur).slice(0, prevMessages.length).map(asBlocks)
  // The transcript is named where it lives: its field, at its entries' own indices there.
  const offset = dialect.messages(cur).length - dialect.transcript(cur).length
  const transcriptDifference = (): string | null => {
    for (let i = 0; i < Math.max(prevMessages.length, curMessages.length); i++) {
      const at = `${dialect.transcriptField}[${offset + i}]`
      const d = firstDifference(strip(prevMessages[i]), strip(curMessages[i]), at)
      if (d) return d
    }
    return null
  }
  const headPrefix = c.head?.slice(0, p.head?.length ?? 0)
  const firstDiff =
    firstDifference(strip(p.model), strip(c.model), 'model') ??
    firstDifference(strip(p.tools), strip(c.tools), 'tools') ??
    firstDifference(strip(p.system), strip(c.system), 'system') ??
    transcriptDifference()
  return {
    model: !sameIgnoringCacheControl(p.model, c.model),
    tools: !sameIgnoringCacheControl(p.tools ?? [], c.tools ?? []),
    system: !sameIgnoringCacheControl(p.system, c.system),
    head: p.head !== undefined && !sameIgnoringCacheControl(p.head, headPrefix),
    keying,
    firstDifference: firstDiff,
  }
}
