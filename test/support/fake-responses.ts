/**
 * The OpenAI Responses dialect of the fake upstream (`POST /v1/responses`): the request's rendering
 * for the prompt-cache model, the `response` object, and its event stream as the real API sends it
 * (`event:` and `data:` lines, every payload with a `sequence_number` from 0, no `[DONE]`).
 * Invariant: the rendering follows the cache order tools → text format → instructions → input items,
 * with a `previous_response_id` chain's items (its input, then its output) before this request's input;
 * reasoning effort and `prompt_cache_key` pick the cache partition. Item `id`/`status` are bookkeeping
 * the model never reads, so they are left out of the rendering.
 */
import {
  argumentsText,
  canonical,
  isObject,
  pad,
  splitArguments,
  splitText,
  tokensOf,
  type Json,
  type JsonObject,
  type ScriptedToolCall,
} from './fake-wire'

/** Stored responses kept for `previous_response_id` (the oldest is forgotten first). */
const STORED_RESPONSES = 256

/** The conversation items of responses created with `store` not false, for `previous_response_id`. */
export class ResponsesStore {
  private readonly items = new Map<string, Json[]>()

  get(id: string): Json[] | undefined {
    return this.items.get(id)
  }

  put(id: string, context: Json[]): void {
    this.items.set(id, context)
    if (this.items.size > STORED_RESPONSES) this.items.delete(this.items.keys().next().value as string)
  }

  clear(): void {
    this.items.clear()
  }
}

/** A request's `input` as the list of items the model reads (a string is one user message). */
export function inputItems(input: Json | undefined): Json[] {
  if (typeof input === 'string') return [userMessage(input)]
  return Array.isArray(input) ? input.map(normalizeItem) : []
}

/** The text the cache model compares: tools, the output format, instructions, then the context items. */
export function responsesRendering(request: JsonObject, context: Json[]): string {
  const text = isObject(request.text) ? request.text : {}
  const instructions = request.instructions ?? null
  return (
    canonical(request.tools ?? []) +
    canonical(text.format ?? null) +
    canonical(
      typeof instructions === 'string' ? [{ type: 'input_text', text: instructions }] : instructions,
    ) +
    canonical(context)
  )
}

/** The cache partition: requests of another model, reasoning effort or prompt_cache_key share nothing. */
export function responsesCacheKey(model: string, request: JsonObject): string {
  const reasoning = isObject(request.reasoning) ? request.reasoning : {}
  const key = typeof request.prompt_cache_key === 'string' ? request.prompt_cache_key : ''
  return `responses\0${model}\0${String(reasoning.effort ?? '')}\0${key}`
}

export interface ResponsesAnswer {
  request: JsonObject
  model: string
  /** The exchange's number, which every id of this answer carries. */
  seq: number
  /** The assistant's text; undefined for an answer that is only function calls. */
  text: string | undefined
  /** A reasoning summary: the answer starts with a reasoning item carrying it. */
  reasoning: string | undefined
  toolCalls: ScriptedToolCall[]
  inputTokens: number
  cachedTokens: number
}

/**
 * The output items of an answer: a reasoning item when scripted (its `encrypted_content` only when the
 * request's `include` asks for it, as the API does), a message when there is text, then one
 * function_call per call.
 */
export function outputItems(answer: ResponsesAnswer): JsonObject[] {
  const items: JsonObject[] = []
  if (answer.reasoning !== undefined) {
    const include = Array.isArray(answer.request.include) ? answer.request.include : []
    const opaque = Buffer.from(`fake reasoning ${answer.seq}: ${answer.reasoning}`).toString('base64')
    items.push({
      id: `rs_fake${pad(answer.seq)}`,
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: answer.reasoning }],
      ...(include.includes('reasoning.encrypted_content') ? { encrypted_content: `gAAAAA${opaque}` } : {}),
    })
  }
  if (answer.text !== undefined) {
    items.push({
      id: `msg_fake${pad(answer.seq)}`,
      type: 'message',
      status: 'completed',
      content: [{ type: 'output_text', annotations: [], logprobs: [], text: answer.text }],
      role: 'assistant',
    })
  }
  answer.toolCalls.forEach((call, i) => {
    items.push({
      id: `fc_fake${pad(answer.seq)}_${i}`,
      type: 'function_call',
      status: 'completed',
      arguments: argumentsText(call),
      call_id: `call_fake${pad(answer.seq)}_${i}`,
      name: call.name,
    })
  })
  return items
}

/** The completed `response` object, request parameters echoed as the real API does. */
export function responseObject(answer: ResponsesAnswer, output: JsonObject[]): JsonObject {
  const { request } = answer
  const outputTokens = output.reduce((sum, item) => sum + tokensOf(itemText(item)), 0)
  const reasoningTokens = output
    .filter((item) => item.type === 'reasoning')
    .reduce((sum, item) => sum + tokensOf(itemText(item)), 0)
  const reasoning = isObject(request.reasoning) ? request.reasoning : {}
  const now = Math.floor(Date.now() / 1000)
  return {
    id: `resp_fake${pad(answer.seq)}`,
    object: 'response',
    created_at: now,
    status: 'completed',
    background: false,
    completed_at: now,
    error: null,
    incomplete_details: null,
    instructions: request.instructions ?? null,
    max_output_tokens: request.max_output_tokens ?? null,
    max_tool_calls: request.max_tool_calls ?? null,
    model: answer.model,
    output,
    parallel_tool_calls: request.parallel_tool_calls ?? true,
    previous_response_id: request.previous_response_id ?? null,
    prompt_cache_key: request.prompt_cache_key ?? null,
    reasoning: { effort: reasoning.effort ?? null, summary: reasoning.summary ?? null },
    safety_identifier: request.safety_identifier ?? null,
    service_tier: 'default',
    store: request.store ?? true,
    temperature: request.temperature ?? 1,
    text: request.text ?? { format: { type: 'text' }, verbosity: 'medium' },
    tool_choice: request.tool_choice ?? 'auto',
    tools: request.tools ?? [],
    top_logprobs: 0,
    top_p: request.top_p ?? 1,
    truncation: request.truncation ?? 'disabled',
    usage: {
      input_tokens: answer.inputTokens,
      input_tokens_details: { cached_tokens: answer.cachedTokens },
      output_tokens: outputTokens,
      output_tokens_details: { reasoning_tokens: reasoningTokens },
      total_tokens: answer.inputTokens + outputTokens,
    },
    user: null,
    metadata: request.metadata ?? {},
  }
}

/** The event stream of a completed response: lifecycle, then each item added, streamed and done. */
export function responseEvents(response: JsonObject): string[] {
  let sequence = 0
  const event = (type: string, fields: JsonObject): string =>
    `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...fields })}\n\n`
  const pending = { ...response, status: 'in_progress', completed_at: null, output: [], usage: null }
  const events = [
    event('response.created', { response: pending }),
    event('response.in_progress', { response: pending }),
  ]
  const output = Array.isArray(response.output) ? response.output.filter(isObject) : []
  output.forEach((item, outputIndex) => {
    const itemId = item.id as string
    const at = { item_id: itemId, output_index: outputIndex }
    if (item.type === 'reasoning') {
      const summary = Array.isArray(item.summary) && isObject(item.summary[0]) ? item.summary[0] : {}
      const text = typeof summary.text === 'string' ? summary.text : ''
      const inSummary = { ...at, summary_index: 0 }
      events.push(
        event('response.output_item.added', {
          output_index: outputIndex,
          item: { ...item, summary: [] },
        }),
        event('response.reasoning_summary_part.added', {
          ...inSummary,
          part: { type: 'summary_text', text: '' },
        }),
        ...splitText(text).map((delta) =>
          event('response.reasoning_summary_text.delta', { ...inSummary, delta }),
        ),
        event('response.reasoning_summary_text.done', { ...inSummary, text }),
        event('response.reasoning_summary_part.done', { ...inSummary, part: summary }),
        event('response.output_item.done', { output_index: outputIndex, item }),
      )
      return
    }
    if (item.type === 'function_call') {
      const args = item.arguments as string
      events.push(
        event('response.output_item.added', {
          output_index: outputIndex,
          item: { ...item, status: 'in_progress', arguments: '' },
        }),
        ...splitArguments(args).map((delta) =>
          event('response.function_call_arguments.delta', { ...at, delta }),
        ),
        event('response.function_call_arguments.done', { ...at, name: item.name ?? null, arguments: args }),
        event('response.output_item.done', { output_index: outputIndex, item }),
      )
      return
    }
    const part = Array.isArray(item.content) && isObject(item.content[0]) ? item.content[0] : {}
    const text = typeof part.text === 'string' ? part.text : ''
    const inPart = { ...at, content_index: 0 }
    events.push(
      event('response.output_item.added', {
        output_index: outputIndex,
        item: { ...item, status: 'in_progress', content: [] },
      }),
      event('response.content_part.added', { ...inPart, part: { ...part, text: '' } }),
      ...splitText(text).map((delta) =>
        event('response.output_text.delta', { ...inPart, delta, logprobs: [] }),
      ),
      event('response.output_text.done', { ...inPart, text, logprobs: [] }),
      event('response.content_part.done', { ...inPart, part }),
      event('response.output_item.done', { output_index: outputIndex, item }),
    )
  })
  events.push(event('response.completed', { response }))
  return events
}

function userMessage(text: string): JsonObject {
  return { type: 'message', role: 'user', content: [{ type: 'input_text', text }] }
}

/** An input item as rendered: `type` defaults to message, a string content is one text part, no id/status. */
function normalizeItem(item: Json): Json {
  if (!isObject(item)) return item
  const { id: _id, status: _status, ...rest } = item
  const type = rest.type ?? (rest.role !== undefined ? 'message' : undefined)
  const typed = type === undefined ? rest : { ...rest, type }
  if (type !== 'message' || typeof rest.content !== 'string') return typed
  const partType = rest.role === 'assistant' ? 'output_text' : 'input_text'
  return { ...typed, content: [{ type: partType, text: rest.content }] }
}

/** What an output item costs in output tokens: its text, its summary, or its name and arguments. */
function itemText(item: JsonObject): string {
  if (item.type === 'function_call') return `${String(item.name)}${String(item.arguments)}`
  const parts = item.type === 'reasoning' ? item.summary : item.content
  const part = Array.isArray(parts) && isObject(parts[0]) ? parts[0] : {}
  return typeof part.text === 'string' ? part.text : ''
}
