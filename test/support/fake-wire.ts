/**
 * Pure helpers the fake upstream's dialects share: JSON types, the canonical rendering that the
 * prompt-cache model compares, word-sized text deltas, and scripted tool calls.
 * Invariant: nothing here holds state; every function is deterministic in its arguments.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
export type JsonObject = { [key: string]: Json }

/** One function call the fake's model makes; dialects render it as tool_use, tool_calls or function_call. */
export interface ScriptedToolCall {
  name: string
  /** The call's arguments: an object, or JSON text sent as is (default `{}`). */
  arguments?: Record<string, unknown> | string
}

export function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

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

/** A call's arguments as the JSON text a provider streams (openai and responses carry this string). */
export function argumentsText(call: ScriptedToolCall): string {
  return typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {})
}

/** A call's arguments as an object (anthropic's `input`); scripted JSON text must parse to one. */
export function argumentsObject(call: ScriptedToolCall): JsonObject {
  const value: unknown = typeof call.arguments === 'string' ? JSON.parse(call.arguments) : call.arguments
  if (value === undefined) return {}
  if (!isObject(value)) throw new Error(`scripted arguments of ${call.name} are not a JSON object`)
  return value
}

/** JSON text cut into pieces of at most 16 characters, as providers stream arguments. */
export function splitArguments(text: string): string[] {
  const pieces: string[] = []
  for (let i = 0; i < text.length; i += 16) pieces.push(text.slice(i, i + 16))
  return pieces.length > 0 ? pieces : ['']
}

/** Tokens of a text at ~4 bytes a token, the fake's one rate. */
export function tokensOf(text: string | Buffer): number {
  return Math.ceil((typeof text === 'string' ? Buffer.byteLength(text) : text.length) / 4)
}

export function pad(n: number): string {
  return String(n).padStart(6, '0')
}
