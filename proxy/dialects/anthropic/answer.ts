/**
 * The anthropic Messages answer: usage (with the writes' lifetimes and the iterations, where
 * reported), stop reason, its id, model and cache diagnostics (JSON, or the `message_start` /
 * `message_delta` events of a stream), the assistant turn rebuilt from either (text, `tool_use`
 * with its `input_json_delta` parts joined, thinking with its signature), and an attempt's first
 * request continuing a notch. Pure. A figure the provider did not report is null, never guessed.
 * https://docs.anthropic.com/en/api/messages-streaming
 */
import type { Usage } from '../../../generated/meta'
import { DEFAULT_MAX_TOKENS, NOT_RUN } from '../../core/continuation'
import { isObject, type Json, type JsonObject } from '../../core/json'
import { sseEvents } from '../../core/sse'
import { int, jsonObjectOf, streamErrorOf, turnText } from '../shared'
import type { AnswerFacts, FirstRequestInput, Rebuilt } from '../../core/dialect'
import { wordOf } from './diagnostics'

/** The figures every usage object (and each of its iterations) carries. */
function tokensOf(
  u: JsonObject,
): Pick<Usage, 'input_tokens' | 'output_tokens' | 'cache_read_tokens' | 'cache_write_tokens'> {
  return {
    input_tokens: int(u.input_tokens),
    output_tokens: int(u.output_tokens),
    cache_read_tokens: int(u.cache_read_input_tokens),
    cache_write_tokens: int(u.cache_creation_input_tokens),
  }
}

/** The lifetimes' buckets of the writes (`cache_creation`) and the iterations, where reported. */
function detailsOf(
  u: JsonObject,
): Pick<Usage, 'cache_write_5m_tokens' | 'cache_write_1h_tokens' | 'iterations'> {
  const out: Pick<Usage, 'cache_write_5m_tokens' | 'cache_write_1h_tokens' | 'iterations'> = {}
  const c = u.cache_creation
  if (isObject(c)) {
    out.cache_write_5m_tokens = int(c.ephemeral_5m_input_tokens)
    out.cache_write_1h_tokens = int(c.ephemeral_1h_input_tokens)
  }
  if (Array.isArray(u.iterations))
    out.iterations = u.iterations.filter(isObject).map((it) => ({
      type: typeof it.type === 'string' ? it.type : 'message',
      model: typeof it.model === 'string' ? it.model : null,
      ...tokensOf(it),
    }))
  return out
}

function usageOf(u: JsonObject): Usage {
  return { ...tokensOf(u), ...detailsOf(u) }
}

/** The answer's id, model and cache word, from the message object (JSON body, or `message_start`). */
function messageFacts(m: JsonObject): Pick<AnswerFacts, 'id' | 'model' | 'word'> {
  return {
    id: typeof m.id === 'string' ? m.id : null,
    model: typeof m.model === 'string' ? m.model : null,
    word: wordOf(m.diagnostics),
  }
}

export function answerFacts(body: Buffer, sse: boolean): AnswerFacts {
  if (!sse) {
    const v = jsonObjectOf(body)
    return {
      usage: v && isObject(v.usage) ? usageOf(v.usage) : null,
      stopReason: v && typeof v.stop_reason === 'string' ? v.stop_reason : null,
      streamError: null,
      ...(v && v.type === 'message' ? messageFacts(v) : {}),
    }
  }
  const events = sseEvents(body.toString('utf8'))
  let usage = null as Usage | null
  let stopReason: string | null = null
  let facts: Pick<AnswerFacts, 'id' | 'model' | 'word'> = {}
  for (const e of events) {
    if (e.type === 'message_start' && isObject(e.message)) {
      facts = messageFacts(e.message)
      if (isObject(e.message.usage)) usage = usageOf(e.message.usage)
    } else if (e.type === 'message_delta') {
      if (isObject(e.delta) && typeof e.delta.stop_reason === 'string') stopReason = e.delta.stop_reason
      if (isObject(e.usage)) {
        // message_delta usage is cumulative; input figures appear here only on some models.
        const d = e.usage
        const was = usage
        const or = (v: Json | undefined, before: number | undefined): number =>
          v !== undefined ? int(v) : (before ?? 0)
        usage = {
          ...was,
          input_tokens: or(d.input_tokens, was?.input_tokens),
          output_tokens: int(d.output_tokens),
          cache_read_tokens: or(d.cache_read_input_tokens, was?.cache_read_tokens),
          cache_write_tokens: or(d.cache_creation_input_tokens, was?.cache_write_tokens),
          ...detailsOf(d),
        }
      }
    }
  }
  return { usage, stopReason, streamError: streamErrorOf(events), ...facts }
}

function rebuilt(content: Json[]): Rebuilt {
  const toolCalls: Rebuilt['toolCalls'] = []
  const parts: ({ text: string } | { call: string })[] = []
  for (const b of content) {
    if (!isObject(b)) continue
    if (b.type === 'text' && typeof b.text === 'string') parts.push({ text: b.text })
    if (b.type === 'tool_use') {
      parts.push({ call: String(b.name) })
      if (typeof b.id === 'string') toolCalls.push({ id: b.id, name: String(b.name) })
    }
  }
  return { turn: [{ role: 'assistant', content }], text: turnText(parts), toolCalls }
}

function contentOfSse(events: JsonObject[]): Json[] {
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
  return blocks.filter((b): b is JsonObject => b !== undefined)
}

export function rebuildReply(response: Buffer, sse: boolean): Rebuilt | undefined {
  const content = sse ? contentOfSse(sseEvents(response.toString('utf8'))) : jsonObjectOf(response)?.content
  return Array.isArray(content) && content.length > 0 ? rebuilt(content) : undefined
}

const isThinking = (b: Json): boolean =>
  isObject(b) && (b.type === 'thinking' || b.type === 'redacted_thinking')

/** Assistant messages without thinking blocks (an emptied message keeps an empty text block). */
function withoutThinking(messages: readonly Json[]): Json[] {
  return messages.map((m) => {
    if (!isObject(m) || m.role !== 'assistant' || !Array.isArray(m.content)) return m
    const content = m.content.filter((b) => !isThinking(b))
    return { ...m, content: content.length > 0 ? content : [{ type: 'text', text: '' }] }
  })
}

/**
 * The notch's request, its reply as the assistant turn, then one user turn: an error result per
 * tool call the reply made, then the text. Thinking blocks are dropped when the model changes
 * (their signatures are bound to it). A clean start is just the text.
 */
export function firstRequest(input: FirstRequestInput): JsonObject {
  const { notch, text } = input
  if (!notch) {
    return {
      model: input.roleModel,
      max_tokens: input.roleMaxTokens ?? DEFAULT_MAX_TOKENS,
      stream: true,
      messages: [{ role: 'user', content: text }],
    }
  }
  const req = notch.request
  let messages: Json[] = [...(Array.isArray(req.messages) ? req.messages : []), ...(notch.reply?.turn ?? [])]
  const content: Json[] = (notch.reply?.toolCalls ?? []).map((c) => ({
    type: 'tool_result',
    tool_use_id: c.id,
    is_error: true,
    content: NOT_RUN,
  }))
  content.push({ type: 'text', text })
  messages.push({ role: 'user', content })
  if (req.model !== input.roleModel) messages = withoutThinking(messages)
  const body: JsonObject = { ...req, messages, stream: true }
  if (req.max_tokens === undefined) body.max_tokens = input.roleMaxTokens ?? DEFAULT_MAX_TOKENS
  return body
}
