/**
 * The OpenAI Responses answer: usage (`input_tokens` counts cached ones: reads in
 * `input_tokens_details.cached_tokens`, writes in `cache_write_tokens` where reported), the stop
 * reason (`incomplete_details.reason`, else `status`), from the response object or the terminal
 * event of a stream (`response.completed` / `incomplete` / `failed`), with its id, model and
 * `prompt_cache_diagnostics`; a stream's `error` event or
 * `response.failed` is a stream error. The assistant turn is the `output` items, to be appended to
 * `input` as they are; an attempt's first request continues a notch with them. Pure. A figure the
 * provider did not report is null, never guessed.
 * https://platform.openai.com/docs/api-reference/responses-streaming
 */
import type { Usage } from '../../../generated/meta'
import { DEFAULT_MAX_TOKENS, NOT_RUN } from '../../core/continuation'
import { isObject, type Json, type JsonObject } from '../../core/json'
import { sseEvents } from '../../core/sse'
import { arrayOf, int, jsonObjectOf, turnText } from '../shared'
import type { AnswerFacts, FirstRequestInput, Rebuilt } from '../../core/dialect'
import { inputItems, userMessage } from './items'
import { wordOf } from './diagnostics'

/** Events whose `response` is the final response object. */
const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed'])
/** Output items the client answers with an output item of its own, and that item's type. */
const CALL_OUTPUT: ReadonlyMap<Json | undefined, string> = new Map([
  ['function_call', 'function_call_output'],
  ['custom_tool_call', 'custom_tool_call_output'],
])

function usageOf(u: JsonObject): Usage {
  const details = isObject(u.input_tokens_details) ? u.input_tokens_details : {}
  const cached = int(details.cached_tokens)
  const written = int(details.cache_write_tokens)
  return {
    input_tokens: Math.max(0, int(u.input_tokens) - cached - written),
    output_tokens: int(u.output_tokens),
    cache_read_tokens: cached,
    cache_write_tokens: written,
  }
}

function stopOf(response: JsonObject): string | null {
  const incomplete = response.incomplete_details
  if (isObject(incomplete) && typeof incomplete.reason === 'string') return incomplete.reason
  return typeof response.status === 'string' ? response.status : null
}

/** The error a stream reported: an `error` event (flat, or with an `error` object) or `response.failed`. */
function streamErrorOf(events: readonly JsonObject[]): AnswerFacts['streamError'] {
  for (const e of events) {
    let err: JsonObject | undefined
    if (e.type === 'error') err = isObject(e.error) ? e.error : e
    else if (e.type === 'response.failed' && isObject(e.response))
      err = isObject(e.response.error) ? e.response.error : { code: 'response.failed' }
    if (err === undefined) continue
    const kind = typeof err.code === 'string' ? err.code : typeof err.type === 'string' ? err.type : 'error'
    const message = typeof err.message === 'string' ? err.message : JSON.stringify(err)
    return { type: kind, message }
  }
  return null
}

/** The last event carrying the final response object, if the stream got that far. */
function finalResponse(events: readonly JsonObject[]): JsonObject | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i] as JsonObject
    if (TERMINAL.has(String(e.type)) && isObject(e.response)) return e.response
  }
  return undefined
}

/** The response's id, model and cache diagnostics. */
function responseFacts(r: JsonObject): Pick<AnswerFacts, 'id' | 'model' | 'word'> {
  return {
    id: typeof r.id === 'string' ? r.id : null,
    model: typeof r.model === 'string' ? r.model : null,
    word: wordOf(r.prompt_cache_diagnostics),
  }
}

export function answerFacts(body: Buffer, sse: boolean): AnswerFacts {
  if (!sse) {
    const v = jsonObjectOf(body)
    return {
      usage: v && isObject(v.usage) ? usageOf(v.usage) : null,
      stopReason: v ? stopOf(v) : null,
      streamError: null,
      ...(v && v.object === 'response' ? responseFacts(v) : {}),
    }
  }
  const events = sseEvents(body.toString('utf8'))
  const final = finalResponse(events)
  return {
    usage: final && isObject(final.usage) ? usageOf(final.usage) : null,
    stopReason: final ? stopOf(final) : null,
    streamError: streamErrorOf(events),
    ...(final ? responseFacts(final) : {}),
  }
}

/** The output items of a stream: the final response's, else each `response.output_item.done` item. */
function outputOfSse(events: readonly JsonObject[]): Json[] {
  const final = finalResponse(events)
  if (final && Array.isArray(final.output) && final.output.length > 0) return final.output
  const done: Json[] = []
  for (const e of events) {
    if (e.type !== 'response.output_item.done' || !isObject(e.item)) continue
    const at = typeof e.output_index === 'number' ? e.output_index : done.length
    done[at] = e.item
  }
  return done.filter((item) => item !== undefined)
}

function rebuilt(output: Json[]): Rebuilt {
  const parts: ({ text: string } | { call: string })[] = []
  const toolCalls: Rebuilt['toolCalls'] = []
  for (const item of output) {
    if (!isObject(item)) continue
    if (item.type === 'message') {
      for (const p of arrayOf(item.content))
        if (isObject(p) && p.type === 'output_text' && typeof p.text === 'string')
          parts.push({ text: p.text })
    } else if (CALL_OUTPUT.has(item.type)) {
      const name = String(item.name)
      parts.push({ call: name })
      if (typeof item.call_id === 'string') toolCalls.push({ id: item.call_id, name })
    }
  }
  return { turn: output, text: turnText(parts), toolCalls }
}

export function rebuildReply(response: Buffer, sse: boolean): Rebuilt | undefined {
  const output = sse ? outputOfSse(sseEvents(response.toString('utf8'))) : jsonObjectOf(response)?.output
  return Array.isArray(output) && output.length > 0 ? rebuilt(output) : undefined
}

const isReasoning = (item: Json): boolean => isObject(item) && item.type === 'reasoning'

/**
 * The notch's input, its reply's output items, an output item "not run" per call the reply made,
 * then the text as a user message. Reasoning items are dropped when the model changes (their
 * encrypted content is bound to it); `previous_response_id` is dropped (the items are all sent, and
 * the role's row may not hold that response); `store` stays as the notch had it. A clean start is
 * just the text.
 */
export function firstRequest(input: FirstRequestInput): JsonObject {
  const { notch, text } = input
  if (!notch) {
    return {
      model: input.roleModel,
      max_output_tokens: input.roleMaxTokens ?? DEFAULT_MAX_TOKENS,
      stream: true,
      input: [userMessage(text)],
    }
  }
  const { previous_response_id: _chain, ...req } = notch.request
  const turn = notch.reply?.turn ?? []
  let items: Json[] = [...inputItems(req.input), ...turn]
  for (const item of turn) {
    const type = isObject(item) ? CALL_OUTPUT.get(item.type) : undefined
    if (type !== undefined && isObject(item) && typeof item.call_id === 'string')
      items.push({ type, call_id: item.call_id, output: NOT_RUN })
  }
  items.push(userMessage(text))
  if (req.model !== input.roleModel) items = items.filter((item) => !isReasoning(item))
  const body: JsonObject = { ...req, input: items, stream: true }
  if (req.max_output_tokens === undefined || req.max_output_tokens === null)
    body.max_output_tokens = input.roleMaxTokens ?? DEFAULT_MAX_TOKENS
  return body
}
