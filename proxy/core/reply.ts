/**
 * The assistant turn a recorded step answered, rebuilt from its `response.json` or the raw
 * `response.sse`: anthropic content blocks (text, `tool_use` with its `input_json_delta` parts
 * joined, thinking with its signature, redacted thinking), openai `{role, content, tool_calls}`.
 * Pure. An answer with no content (an error, an empty stream) rebuilds to undefined.
 */
import { isObject, type Json, type JsonObject } from './json'
import { sseEvents } from './sse'

export type Rebuilt = { message: JsonObject; toolCalls: { id: string; name: string }[] }

function anthropicFromJson(body: JsonObject): Rebuilt | undefined {
  if (!Array.isArray(body.content)) return undefined
  return withCalls({ role: 'assistant', content: body.content })
}

function withCalls(message: JsonObject): Rebuilt {
  const calls: { id: string; name: string }[] = []
  if (Array.isArray(message.content)) {
    for (const b of message.content) {
      if (isObject(b) && b.type === 'tool_use' && typeof b.id === 'string')
        calls.push({ id: b.id, name: String(b.name) })
    }
  }
  if (Array.isArray(message.tool_calls)) {
    for (const c of message.tool_calls) {
      if (isObject(c) && typeof c.id === 'string') {
        calls.push({ id: c.id, name: isObject(c.function) ? String(c.function.name) : '' })
      }
    }
  }
  return { message, toolCalls: calls }
}

function anthropicFromSse(events: JsonObject[]): Rebuilt | undefined {
  const blocks: JsonObject[] = []
  const partial = new Map<number, string>()
  for (const e of events) {
    const index = typeof e.index === 'number' ? e.index : -1
    if (e.type === 'content_block_start' && isObject(e.content_block)) {
      blocks[index] = { ...e.content_block }
    } else if (e.type === 'content_block_delta' && isObject(e.delta) && blocks[index]) {
      const b = blocks[index] as JsonObject
      const d = e.delta
      if (d.type === 'text_delta') b.text = String(b.text ?? '') + String(d.text ?? '')
      else if (d.type === 'thinking_delta') b.thinking = String(b.thinking ?? '') + String(d.thinking ?? '')
      else if (d.type === 'signature_delta')
        b.signature = String(b.signature ?? '') + String(d.signature ?? '')
      else if (d.type === 'input_json_delta')
        partial.set(index, (partial.get(index) ?? '') + String(d.partial_json ?? ''))
    }
  }
  for (const [index, json] of partial) {
    const b = blocks[index]
    if (b) b.input = json.trim() === '' ? {} : (JSON.parse(json) as Json)
  }
  const content = blocks.filter((b): b is JsonObject => b !== undefined)
  if (content.length === 0) return undefined
  return withCalls({ role: 'assistant', content })
}

function openaiFromJson(body: JsonObject): Rebuilt | undefined {
  const choice = Array.isArray(body.choices) ? body.choices[0] : undefined
  if (!isObject(choice) || !isObject(choice.message)) return undefined
  const m = choice.message
  const message: JsonObject = { role: 'assistant', content: m.content ?? null }
  if (Array.isArray(m.tool_calls) && m.tool_calls.length > 0) message.tool_calls = m.tool_calls
  return withCalls(message)
}

function openaiFromSse(events: JsonObject[]): Rebuilt | undefined {
  let content: string | null = null
  const calls: JsonObject[] = []
  for (const e of events) {
    const choice = Array.isArray(e.choices) ? e.choices[0] : undefined
    if (!isObject(choice) || !isObject(choice.delta)) continue
    const d = choice.delta
    if (typeof d.content === 'string') content = (content ?? '') + d.content
    for (const tc of Array.isArray(d.tool_calls) ? d.tool_calls : []) {
      if (!isObject(tc)) continue
      const i = typeof tc.index === 'number' ? tc.index : calls.length
      const call = (calls[i] ??= { id: '', type: 'function', function: { name: '', arguments: '' } })
      const fn = call.function as JsonObject
      if (typeof tc.id === 'string') call.id = tc.id
      if (isObject(tc.function)) {
        if (typeof tc.function.name === 'string') fn.name = String(fn.name) + tc.function.name
        if (typeof tc.function.arguments === 'string')
          fn.arguments = String(fn.arguments) + tc.function.arguments
      }
    }
  }
  const present = calls.filter((c) => c !== undefined)
  if (content === null && present.length === 0) return undefined
  const message: JsonObject = { role: 'assistant', content }
  if (present.length > 0) message.tool_calls = present
  return withCalls(message)
}

/** The assistant turn of a recorded answer; `sse` when the record is `response.sse`. */
export function rebuildReply(
  dialect: 'anthropic' | 'openai',
  response: Buffer,
  sse: boolean,
): Rebuilt | undefined {
  const text = response.toString('utf8')
  if (sse) return dialect === 'anthropic' ? anthropicFromSse(sseEvents(text)) : openaiFromSse(sseEvents(text))
  let body: Json
  try {
    body = JSON.parse(text) as Json
  } catch {
    // A response that is not JSON (a gateway's HTML error) has no assistant turn.
    return undefined
  }
  if (!isObject(body)) return undefined
  return dialect === 'anthropic' ? anthropicFromJson(body) : openaiFromJson(body)
}
