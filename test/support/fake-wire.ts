/**
 * Pure helpers the fake upstream's dialects share: JSON types, the canonical rendering that the
 * prompt-cache model compares, and word-sized text deltas.
 * Invariant: nothing here holds state; every function is deterministic in its arguments.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
export type JsonObject = { [key: string]: Json }

/** JSON with sorted keys and every `cache_control` removed: markers never change the cached prefix. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const object = value as Record<string, unknown>
    const keys = Object.keys(object)
      .filter((key) => key !== 'cache_control' && object[key] !== undefined)
      .sort()
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical(object[key])}`).join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

/** The reply split into word-sized deltas, as a provider streams it. */
export function splitText(text: string): string[] {
  const pieces = text.match(/\s*\S+\s*/g)
  return pieces === null ? [text] : pieces
}

export function pad(n: number): string {
  return String(n).padStart(6, '0')
}
