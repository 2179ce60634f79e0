/**
 * Whether one tools array is a sub-multiset of another (DESIGN §6 as amended): every current
 * definition identical to a distinct previous one — the same JSON value with its keys in the same
 * order, `cache_control` markers ignored at any depth — in any order. Pure. Candidates are found by
 * name (a nameless hosted tool by nothing: it is compared with every nameless one), so an ordinary
 * step costs one comparison per tool. An empty current array is a sub-multiset of anything.
 */
import { isObject, type Json } from './json'

export interface ToolMatch {
  /** Indices of the previous array that no current definition took, ascending. */
  dropped: number[]
  /** True when the kept definitions are in another order than in the previous array. */
  reordered: boolean
}

/**
 * `a` and `b` are the same definition: equal JSON values, object keys in the same order (a
 * provider renders a schema's keys in the order sent), `cache_control` keys ignored everywhere.
 */
export function sameDefinition(a: Json | undefined, b: Json | undefined): boolean {
  if (a === b) return true
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!sameDefinition(a[i], b[i])) return false
    return true
  }
  if (!isObject(a) || !isObject(b)) return false
  const ka = Object.keys(a).filter((k) => k !== 'cache_control')
  const kb = Object.keys(b).filter((k) => k !== 'cache_control')
  if (ka.length !== kb.length) return false
  for (let i = 0; i < ka.length; i++) {
    const k = ka[i] as string
    if (k !== kb[i] || !sameDefinition(a[k], b[k])) return false
  }
  return true
}

/**
 * The match of `current` into `previous`, or undefined when some current definition has no
 * distinct identical one there. Each current definition takes the first free identical previous
 * one after the last taken (so an order-preserving match is found whenever one exists: the
 * leftmost, as the seed's subsequence), else the first free one at all (a reorder).
 */
export function subMultiset(
  previous: readonly Json[],
  current: readonly Json[],
  nameOf: (tool: Json) => string | undefined,
): ToolMatch | undefined {
  if (current.length > previous.length) return undefined
  const byName = new Map<string, number[]>()
  previous.forEach((tool, i) => {
    const key = nameOf(tool) ?? ''
    const list = byName.get(key)
    if (list) list.push(i)
    else byName.set(key, [i])
  })
  const taken = new Uint8Array(previous.length)
  let last = -1
  let reordered = false
  for (const tool of current) {
    const candidates = byName.get(nameOf(tool) ?? '') ?? []
    let pick = -1
    let fallback = -1
    for (const i of candidates) {
      if (taken[i] || !sameDefinition(previous[i], tool)) continue
      if (i > last) {
        pick = i
        break
      }
      if (fallback === -1) fallback = i
    }
    if (pick === -1) {
      if (fallback === -1) return undefined
      pick = fallback
      reordered = true
    }
    taken[pick] = 1
    last = pick
  }
  const dropped: number[] = []
  taken.forEach((t, i) => {
    if (!t) dropped.push(i)
  })
  return { dropped, reordered }
}
