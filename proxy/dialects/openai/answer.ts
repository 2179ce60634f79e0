/**
 * The openai Chat Completions answer: usage (cache reads in `prompt_tokens_details.cached_tokens`,
 * cache writes where a provider reports `cache_write_tokens` beside them) and finish reason, from
 * JSON or the chunks of a stream; the assistant turn rebuilt from either (content and tool calls,
 * their argument fragments joined); an attempt's first request continuing a notch. Pure. An
 * openai stream without `stream_options.include_usage` reports no usage: null, never guessed.
 * https://platform.openai.com/docs/api-reference/chat/streaming
 */
import type { Usage } from '../../../generated/meta'
import { DEFAULT_MAX_TOKENS, NOT_RUN } from '../../core/continuation'
import { isObject, type Json, type JsonObject } from '../../core/json'
import { sseEvents } from '../../core/sse'
import { arrayOf, int, jsonObjectOf, streamErrorOf, turnText } from '../shared'
import type { AnswerFacts, FirstRequestInput, Rebuilt } from '../../core/dialect'

function usageOf(u: JsonObject): Usage {
  const details = isObject(u.prompt_tokens_details) ? u.prompt_tokens_details : {}
  const cached = int(details.cached_tokens)
  // Providers that bill cache writes on this dialect report them beside the cached tokens.
  const written = int(details.cache_write_tokens)
  return {
    input_tokens: Math.max(0, int(u.prompt_tokens) - cached - written),
    output_tokens: int(u.completion_tokens),
    cache_read_tokens: cached,
    cache_write_tokens: written,
  }
}

const firstChoice = (v: JsonObject): JsonObject | undefined => {
  const c = arrayOf(v.choices)[0]
  return isObject(c) ? c : undefined
}

export function answerFacts(body: Buffer, sse: boolean): AnswerFacts {
  if (!sse) {
    const v = jsonObjectOf(body)
    const choice = v && firstChoice(v)
    return {
      usage: v && isObject(v.usage) ? usageOf(v.usage) : null,
      stopReason: choice && typeof choice.finish_reason === 'string' ? choice.finish_reason : null,
      streamError: null,
    }
  }
  const events = sseEvents(body.toString('utf8'))
  let usage: Usage | null = null
  let stopReason: string | null = null
  for (const e of events) {
    if (isObject(e.usage)) usage = usageOf(e.usage)
    const choice = firstChoice(e)
    if (choice && typeof choice.finish_reason === 'string') stopReason = choice.finish_reason
  }
  return { usage, stopReason, streamError: streamErrorOf(events) }
}

function rebuilt(content: Json, calls: JsonObject[]): Rebuilt {
  const message: JsonObject = { role: 'assistant', content }
  if (calls.length > 0) message.tool_calls = calls
  const parts: ({ text: string } | { call: string })[] =
    typeof content === 'string' ? [{ text: content }] : []
  const toolCalls: Rebuilt['toolCalls'] = []
  for (const c of calls) {
    const name = isObject(c.function) ? String(c.function.name) : ''
    parts.push({ call: name })
    if (typeof c.id === 'string') toolCalls.push({ id: c.id, name })
  }
  return { turn: [message], text: turnText(parts), toolCalls }
}

function fromSse(events: JsonObject[]): Rebuilt | undefined {
  let content: string | null = null
  const calls: JsonObject[] = []
  for (const e of events) {
    const choice = firstChoice(e)
    if (!choice || !isObject(choice.delta)) continue
    const d = choice.delta
    if (typeof d.content === 'string') content = (content ?? '') + d.content
    for (const tc of arrayOf(d.tool_calls)) {
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
  return content === null && present.length === 0 ? undefined : rebuilt(content, present)
}

export function rebuildReply(response: Buffer, sse: boolean): Rebuilt | undefined {
  if (sse) return fromSse(sseEvents(response.toString('utf8')))
  const v = jsonObjectOf(response)
  const m = v && firstChoice(v)?.message
  if (!isObject(m)) return undefined
  const calls = arrayOf(m.tool_calls).filter(isObject)
  return rebuilt(m.content ?? null, calls)
}

/**
 * The notch's request, its reply as the assistant turn, a `tool` message per tool call it made
 * ("not run"), then the text as a user message. A clean start is just the text.
 */
export function firstRequest(input: FirstRequestInput): JsonObject {
  const { notch, text } = input
  if (!notch) {
    return {
      model: input.roleModel,
      max_completion_tokens: input.roleMaxTokens ?? DEFAULT_MAX_TOKENS,
      stream: true,
      messages: [{ role: 'user', content: text }],
      stream_options: { include_usage: true },
    }
  }
  const req = notch.request
  const messages: Json[] = [...arrayOf(req.messages), ...(notch.reply?.turn ?? [])]
  for (const c of notch.reply?.toolCalls ?? [])
    messages.push({ role: 'tool', tool_call_id: c.id, content: NOT_RUN })
  messages.push({ role: 'user', content: text })
  const body: JsonObject = { ...req, messages, stream: true }
  if (req.max_completion_tokens === undefined && req.max_tokens === undefined)
    body.max_completion_tokens = input.roleMaxTokens ?? DEFAULT_MAX_TOKENS
  body.stream_options = { include_usage: true }
  return body
}
