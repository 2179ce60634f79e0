/**
 * JSON values as parsed by `JSON.parse`, and the two helpers every comparison uses.
 * Invariant: comparisons of request parts ignore `cache_control` markers (DESIGN §6) and
 * never re-stringify to compare (deep equality is far cheaper: docs/performance.md).
 */
import { dequal } from 'dequal'

export type Json = null | boolean | number | string | Json[] | JsonObject
export interface JsonObject {
  [key: string]: Json
}

export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** `v` with every `cache_control` key removed at any depth; returns `v` itself when it has none. */
export function withoutCacheControl(v: Json): Json {
  if (Array.isArray(v)) {
    let out: Json[] | undefined
    for (let i = 0; i < v.length; i++) {
      const item = v[i] as Json
      const stripped = withoutCacheControl(item)
      if (stripped !== item) {
        out ??= v.slice()
        out[i] = stripped
      }
    }
    return out ?? v
  }
  if (isObject(v)) {
    let out: JsonObject | undefined
    for (const k of Object.keys(v)) {
      const item = v[k] as Json
      if (k === 'cache_control') {
        out ??= { ...v }
        delete out[k]
        continue
      }
      const stripped = withoutCacheControl(item)
      if (stripped !== item) {
        out ??= { ...v }
        out[k] = stripped
      }
    }
    return out ?? v
  }
  return v
}

/** Deep equality of two JSON values, `cache_control` markers ignored. */
export function sameIgnoringCacheControl(a: Json | undefined, b: Json | undefined): boolean {
  // One value (a subtree the read shared with the previous request's): no copy to compare.
  if (a === b) return true
  if (a === undefined || b === undefined) return false
  return dequal(withoutCacheControl(a), withoutCacheControl(b))
}
