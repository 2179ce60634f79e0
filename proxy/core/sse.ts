/**
 * Server-sent events as recorded in `response.sse`: the `data:` payloads that parse as JSON
 * objects, in order (comments, pings without data, `[DONE]` and torn tails are skipped). Pure.
 */
import { isObject, type Json, type JsonObject } from './json'

/** The `data:` payloads of an SSE stream that parse as JSON objects, in order. */
export function sseEvents(text: string): JsonObject[] {
  const out: JsonObject[] = []
  for (const block of text.split(/\r?\n\r?\n/)) {
    const data: string[] = []
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith('data:')) data.push(line.slice(line[5] === ' ' ? 6 : 5))
    }
    if (data.length === 0) continue
    const payload = data.join('\n')
    if (payload === '[DONE]') continue
    try {
      const v = JSON.parse(payload) as Json
      if (isObject(v)) out.push(v)
    } catch {
      // A data line that is not JSON (a provider comment, a truncated tail) carries no usage.
      continue
    }
  }
  return out
}
