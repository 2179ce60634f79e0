/**
 * Input items of the OpenAI Responses dialect as the cache sees them: a string `input` is one user
 * message; a message is an item of type `message` or an untyped one with a `role`; a string content
 * is one text part (`input_text`, or `output_text` for the assistant); an item's `id`/`status` and a
 * part's `prompt_cache_breakpoint` are bookkeeping the model never reads. Pure; an absent or
 * malformed `input` is no items.
 * https://platform.openai.com/docs/api-reference/responses/create#responses-create-input
 */
import { isObject, type Json, type JsonObject } from '../../core/json'

/** A user message of one text part. */
export function userMessage(text: string): JsonObject {
  return { type: 'message', role: 'user', content: [{ type: 'input_text', text }] }
}

/** The request's `input` as items: a string is one user message (with its string content kept). */
export function inputItems(input: Json | undefined): Json[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }]
  return Array.isArray(input) ? input : []
}

export function isMessage(item: Json | undefined): item is JsonObject {
  return isObject(item) && (item.type === 'message' || (item.type === undefined && item.role !== undefined))
}

/** A leading `system`/`developer` message: part of the system, ahead of the transcript. */
export function isSystemItem(item: Json | undefined): boolean {
  return isMessage(item) && (item.role === 'system' || item.role === 'developer')
}

/** Where the system part (the leading system/developer messages) of `items` ends. */
export function systemEnd(items: readonly Json[]): number {
  let split = 0
  while (split < items.length && isSystemItem(items[split])) split++
  return split
}

/** `content` as parts: a string is one text part of the role's kind; parts without their breakpoint marker. */
export function partsOf(content: Json | undefined, role: Json | undefined): Json[] {
  if (typeof content === 'string') {
    return [{ type: role === 'assistant' ? 'output_text' : 'input_text', text: content }]
  }
  if (!Array.isArray(content)) return []
  return content.map((part) => {
    if (!isObject(part) || part.prompt_cache_breakpoint === undefined) return part
    const { prompt_cache_breakpoint: _marker, ...rest } = part
    return rest
  })
}

/** An item as the cache sees it: no `id`/`status`; a message typed, its content as parts. */
export function asCached(item: Json): Json {
  if (!isObject(item)) return item
  const { id: _id, status: _status, ...rest } = item
  if (!isMessage(item)) return rest
  return { ...rest, type: 'message', content: partsOf(item.content, item.role) }
}

/** The head facet of an item: a message's parts, any other item as its one cached self. */
export function headOf(item: Json | undefined): Json[] | undefined {
  if (item === undefined) return undefined
  return isMessage(item) ? partsOf(item.content, item.role) : [asCached(item)]
}
