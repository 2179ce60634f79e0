/**
 * Small helpers both dialects use. Pure.
 */
import { isObject, type Json, type JsonObject } from '../core/json'

export function arrayOf(v: Json | undefined): Json[] {
  return Array.isArray(v) ? v : []
}

/**
 * The tool names the transcript's assistant messages call, first-seen order, no duplicates;
 * `namesOf` picks a message's called names in the dialect's shape.
 */
export function namesCalled(
  body: JsonObject,
  namesOf: (message: JsonObject) => (Json | undefined)[],
): string[] {
  const names = new Set<string>()
  for (const m of arrayOf(body.messages)) {
    if (!isObject(m) || m.role !== 'assistant') continue
    for (const name of namesOf(m)) if (typeof name === 'string') names.add(name)
  }
  return [...names]
}
