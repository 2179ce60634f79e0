/**
 * Why a step's cached prefix moved: compare two recorded requests in cache order (tools, system,
 * transcript — mid-conversation `system` entries included, where they stand) and name what moved,
 * the first path where they differ and a bounded excerpt of both sides there, with the hold's own
 * equivalences (`cache_control` ignored, a string content equal to one text block). Pure. An
 * absent previous step (a first step) moves nothing: the prefix is new.
 */
import type { Dialect } from './dialect'
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
  /** Both sides at the first difference, as bounded excerpts; null when nothing differs. */
  difference: Difference | null
  /** How the tools moved, by name; null when they did not. */
  toolChanges: ToolChanges | null
}

/** The tools of two requests compared by name (a nameless hosted tool by its type). */
export interface ToolChanges {
  added: string[]
  removed: string[]
  /** The same name with another definition (markers aside). */
  edited: string[]
  /** The tools both have, with the same definitions, were sent in another order. */
  reordered: boolean
}

/** What happened to the tools between `prev` and `cur`, by name. */
export function toolChanges(dialect: Dialect, prev: readonly Json[], cur: readonly Json[]): ToolChanges {
  const nameOf = (t: Json, i: number): string =>
    dialect.toolName(t) ?? (isObject(t) && typeof t.type === 'string' ? t.type : `tools[${i}]`)
  const before = new Map(prev.map((t, i) => [nameOf(t, i), t]))
  const after = new Map(cur.map((t, i) => [nameOf(t, i), t]))
  const added = [...after.keys()].filter((n) => !before.has(n))
  const removed = [...before.keys()].filter((n) => !after.has(n))
  const kept = [...after.keys()].filter((n) => before.has(n))
  const edited = kept.filter((n) => !sameIgnoringCacheControl(before.get(n), after.get(n)))
  const order = (names: string[]) => names.filter((n) => kept.includes(n) && !edited.includes(n)).join('\0')
  return { added, removed, edited, reordered: order([...before.keys()]) !== order([...after.keys()]) }
}

/** The two sides of the first difference: where they part, and a few characters of each around it. */
export interface Difference {
  path: string
  /** The character (of a string; of the JSON text otherwise) where the two sides part. */
  offset: number
  /** Excerpts of each side around `offset` (`…` where cut; null when that side is absent). */
  previous: string | null
  current: string | null
}

/** Characters shown on each side of where the two values part. */
export const EXCERPT_CONTEXT = 40

/** The text a value is compared by in an excerpt: a string as is, anything else as JSON. */
function textOf(v: Json): string {
  return typeof v === 'string' ? v : JSON.stringify(v)
}

/** One line of at most about 2 × EXCERPT_CONTEXT characters of `text` around `at`, control characters escaped. */
function cut(text: string, at: number, length: number): string {
  const from = Math.max(0, at - EXCERPT_CONTEXT)
  const to = Math.min(text.length, at + Math.min(Math.max(length, 1), 2 * EXCERPT_CONTEXT) + EXCERPT_CONTEXT)
  const shown = text
    .slice(from, to)
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f]/g, (c) => JSON.stringify(c).slice(1, -1))
  return `${from > 0 ? '…' : ''}${shown}${to < text.length ? '…' : ''}`
}

/** The excerpts of two differing values (either may be absent), around the first character they differ at. */
export function excerpt(path: string, a: Json | undefined, b: Json | undefined): Difference {
  const ta = a === undefined ? undefined : textOf(a)
  const tb = b === undefined ? undefined : textOf(b)
  let i = 0
  if (ta !== undefined && tb !== undefined) {
    const n = Math.min(ta.length, tb.length)
    while (i < n && ta.charCodeAt(i) === tb.charCodeAt(i)) i++
    // The common tail is not the difference: show what each side has in its place.
    let tail = 0
    while (tail < n - i && ta.charCodeAt(ta.length - 1 - tail) === tb.charCodeAt(tb.length - 1 - tail)) tail++
    return {
      path,
      offset: i,
      previous: cut(ta, i, ta.length - tail - i),
      current: cut(tb, i, tb.length - tail - i),
    }
  }
  return {
    path,
    offset: 0,
    previous: ta === undefined ? null : cut(ta, 0, 0),
    current: tb === undefined ? null : cut(tb, 0, 0),
  }
}

/** The first place where `a` and `b` differ, depth first, with both values there; null when equal. */
export function differenceAt(
  a: Json | undefined,
  b: Json | undefined,
  at: string,
): { path: string; a: Json | undefined; b: Json | undefined } | null {
  if (a === undefined || b === undefined) return a === b ? null : { path: at, a, b }
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const d = differenceAt(a[i], b[i], `${at}[${i}]`)
      if (d) return d
    }
    const i = Math.min(a.length, b.length)
    return a.length === b.length ? null : { path: `${at}[${i}]`, a: a[i], b: b[i] }
  }
  if (isObject(a) && isObject(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])]
    for (const k of keys) {
      const d = differenceAt(
        a[k],
        b[k],
        /^[A-Za-z_][A-Za-z0-9_]*$/.test(k) ? `${at}.${k}` : `${at}[${JSON.stringify(k)}]`,
      )
      if (d) return d
    }
    return null
  }
  return a === b ? null : { path: at, a, b }
}

/** The first path where `a` and `b` differ, depth first, or null when equal. */
export function firstDifference(a: Json | undefined, b: Json | undefined, at: string): string | null {
  return differenceAt(a, b, at)?.path ?? null
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
  const prevMessages = dialect.transcript(prev)
  const curMessages = dialect.transcript(cur).slice(0, prevMessages.length)
  // The transcript is named where it lives: its field, at its entries' own indices there.
  const offset = dialect.messages(cur).length - dialect.transcript(cur).length
  const transcriptDifference = (): ReturnType<typeof differenceAt> => {
    for (let i = 0; i < Math.max(prevMessages.length, curMessages.length); i++) {
      const [a, b] = [prevMessages[i], curMessages[i]]
      // One value (an entry an incremental read shared with the previous request): no copy to compare.
      if (a === b) continue
      const at = `${dialect.transcriptField}[${offset + i}]`
      const d = differenceAt(strip(a && asBlocks(a)), strip(b && asBlocks(b)), at)
      if (d) return d
    }
    return null
  }
  const headPrefix = c.head?.slice(0, p.head?.length ?? 0)
  const differs = (a: Json | undefined, b: Json | undefined, at: string): ReturnType<typeof differenceAt> =>
    a === b ? null : differenceAt(strip(a), strip(b), at)
  const first =
    differs(p.model, c.model, 'model') ??
    differs(p.tools, c.tools, 'tools') ??
    differs(p.system, c.system, 'system') ??
    transcriptDifference()
  const toolsMoved = !sameIgnoringCacheControl(p.tools ?? [], c.tools ?? [])
  return {
    model: !sameIgnoringCacheControl(p.model, c.model),
    tools: toolsMoved,
    system: !sameIgnoringCacheControl(p.system, c.system),
    head: p.head !== undefined && !sameIgnoringCacheControl(p.head, headPrefix),
    keying,
    firstDifference: first?.path ?? null,
    difference: first ? excerpt(first.path, first.a, first.b) : null,
    toolChanges: toolsMoved ? toolChanges(dialect, p.tools ?? [], c.tools ?? []) : null,
  }
}
