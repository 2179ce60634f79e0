/**
 * Small helpers the dialects share. Pure.
 */
import { isObject, type Json, type JsonObject } from '../core/json'
import { parseJsonBytes } from '../core/json-bytes'

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

/**
 * A type check of one value the proxy reads: undefined when it fits, else one sentence naming
 * the field by its path (`tools[2].name must be a string`). Checks never recurse into what they
 * do not read, and what they read is bounded by the request's nesting limit.
 */
export type Check = (v: Json, at: string) => string | undefined

export const str: Check = (v, at) => (typeof v === 'string' ? undefined : `${at} must be a string`)
export const bool: Check = (v, at) => (typeof v === 'boolean' ? undefined : `${at} must be true or false`)
export const num: Check = (v, at) =>
  typeof v === 'number' && Number.isFinite(v) ? undefined : `${at} must be a number`
export const obj: Check = (v, at) => (isObject(v) ? undefined : `${at} must be an object`)
/** `check`, or null (a field the API accepts as null, meaning absent). */
export const orNull =
  (check: Check): Check =>
  (v, at) =>
    v === null ? undefined : check(v, at)

/** `at.k`, or `k` at the top of the body. */
const join = (at: string, k: string): string => (at === '' ? k : `${at}.${k}`)

/** An object whose listed fields, when present, pass their checks; `required` ones must be present. */
export function fields(spec: Readonly<Record<string, Check>>, required: readonly string[] = []): Check {
  return (v, at) => {
    if (!isObject(v)) return `${at} must be an object`
    for (const k of required) if (v[k] === undefined) return `${join(at, k)} is required`
    for (const [k, check] of Object.entries(spec)) {
      const value = v[k]
      if (value === undefined) continue
      const bad = check(value, join(at, k))
      if (bad) return bad
    }
    return undefined
  }
}

/** An array whose every element passes `each`. */
export function arrayOfChecked(each: Check, what: string): Check {
  return (v, at) => {
    if (!Array.isArray(v)) return `${at} must be an array of ${what}`
    for (let i = 0; i < v.length; i++) {
      const bad = each(v[i] as Json, `${at}[${i}]`)
      if (bad) return bad
    }
    return undefined
  }
}

type Kind = 'string' | 'array' | 'object' | 'null'
const kindOf = (v: Json): Kind | undefined =>
  v === null
    ? 'null'
    : Array.isArray(v)
      ? 'array'
      : isObject(v)
        ? 'object'
        : typeof v === 'string'
          ? 'string'
          : undefined

/**
 * A value of one of several kinds, each checked by its own check (`true`: any value of that kind);
 * of any other kind → `${at} must be ${what}`.
 */
export function oneOf(what: string, kinds: Partial<Record<Kind, Check | true>>): Check {
  return (v, at) => {
    const kind = kindOf(v)
    const check = kind === undefined ? undefined : kinds[kind]
    if (check === undefined) return `${at} must be ${what}`
    return check === true ? undefined : check(v, at)
  }
}

/** The first problem of a body's top-level fields, by `spec`, named by its path from the top. */
export function firstProblem(body: JsonObject, spec: Readonly<Record<string, Check>>): string | undefined {
  return fields(spec)(body, '')
}

/** A token count as reported: a finite number rounded, anything else 0. */
export const int = (v: Json | undefined): number =>
  typeof v === 'number' && Number.isFinite(v) ? Math.round(v) : 0

/** A decoded JSON answer as an object, or undefined (a gateway's HTML error page, a torn body). */
export function jsonObjectOf(body: Buffer): JsonObject | undefined {
  try {
    const v = parseJsonBytes(body)
    return isObject(v) ? v : undefined
  } catch {
    // Not JSON: the answer reports nothing.
    return undefined
  }
}

/**
 * An error the provider reported inside a 200 event stream (anthropic `{type: "error", error}`;
 * openai a `data: {error}` chunk), if any.
 */
export function streamErrorOf(events: readonly JsonObject[]): { type: string; message: string } | null {
  for (const e of events) {
    const err = e.error
    if (isObject(err) && (e.type === 'error' || e.type === undefined)) {
      return {
        type: typeof err.type === 'string' ? err.type : 'error',
        message: typeof err.message === 'string' ? err.message : JSON.stringify(err),
      }
    }
  }
  return null
}

/** A string content, or the `text` of its text blocks/parts joined by newlines. */
export function contentText(content: Json | undefined): string {
  if (typeof content === 'string') return content
  const parts: string[] = []
  for (const b of arrayOf(content)) if (isObject(b) && typeof b.text === 'string') parts.push(b.text)
  return parts.join('\n')
}

/** The answer's text as `holdfast cohort` shows it: text parts, and `[calls <name>]` per tool call. */
export function turnText(parts: readonly ({ text: string } | { call: string })[]): string {
  return parts.map((p) => ('text' in p ? p.text : `[calls ${p.call}]`)).join('\n')
}
