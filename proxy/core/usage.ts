/**
 * What a provider's answer says about tokens and why it stopped, read from the decoded copy of
 * the response (JSON or the raw SSE stream). Invariant: a figure the provider did not report is
 * null, never guessed (an openai stream without `include_usage` has no usage).
 */
import type { DialectName } from '../dialects/types'
import type { Usage } from '../../generated/meta'
import { isObject, type Json, type JsonObject } from './json'
import { sseEvents } from './sse'

export { sseEvents }

export interface AnswerFacts {
  usage: Usage | null
  stopReason: string | null
  /** An error event inside a 200 stream: the answer failed though its status said ok. */
  streamError: { type: string; message: string } | null
}

const int = (v: Json | undefined): number => (typeof v === 'number' && Number.isFinite(v) ? Math.round(v) : 0)

function anthropicUsage(u: JsonObject): Usage {
  return {
    input_tokens: int(u.input_tokens),
    output_tokens: int(u.output_tokens),
    cache_read_tokens: int(u.cache_read_input_tokens),
    cache_write_tokens: int(u.cache_creation_input_tokens),
  }
}

function openaiUsage(u: JsonObject): Usage {
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

function fromJson(dialect: DialectName, body: JsonObject): Omit<AnswerFacts, 'streamError'> {
  if (dialect === 'anthropic') {
    return {
      usage: isObject(body.usage) ? anthropicUsage(body.usage) : null,
      stopReason: typeof body.stop_reason === 'string' ? body.stop_reason : null,
    }
  }
  const choice = Array.isArray(body.choices) && isObject(body.choices[0]) ? body.choices[0] : undefined
  return {
    usage: isObject(body.usage) ? openaiUsage(body.usage) : null,
    stopReason: choice && typeof choice.finish_reason === 'string' ? choice.finish_reason : null,
  }
}

/**
 * An error the provider reported inside a 200 event stream (anthropic `event: error` with
 * `{type: "error", error}`; openai a `data: {error}` chunk), if any.
 */
function streamErrorOf(events: JsonObject[]): { type: string; message: string } | null {
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

function fromSse(dialect: DialectName, events: JsonObject[]): AnswerFacts {
  return { ...usageOfSse(dialect, events), streamError: streamErrorOf(events) }
}

function usageOfSse(dialect: DialectName, events: JsonObject[]): Omit<AnswerFacts, 'streamError'> {
  if (dialect === 'anthropic') {
    let usage = null as Usage | null
    let stopReason: string | null = null
    for (const e of events) {
      if (e.type === 'message_start' && isObject(e.message) && isObject(e.message.usage)) {
        usage = anthropicUsage(e.message.usage)
      } else if (e.type === 'message_delta') {
        if (isObject(e.delta) && typeof e.delta.stop_reason === 'string') stopReason = e.delta.stop_reason
        if (isObject(e.usage)) {
          // message_delta usage is cumulative; input figures appear here only on some models.
          const d = e.usage
          usage = {
            input_tokens: d.input_tokens !== undefined ? int(d.input_tokens) : (usage?.input_tokens ?? 0),
            output_tokens: int(d.output_tokens),
            cache_read_tokens:
              d.cache_read_input_tokens !== undefined
                ? int(d.cache_read_input_tokens)
                : (usage?.cache_read_tokens ?? 0),
            cache_write_tokens:
              d.cache_creation_input_tokens !== undefined
                ? int(d.cache_creation_input_tokens)
                : (usage?.cache_write_tokens ?? 0),
          }
        }
      }
    }
    return { usage, stopReason }
  }
  let usage: Usage | null = null
  let stopReason: string | null = null
  for (const e of events) {
    if (isObject(e.usage)) usage = openaiUsage(e.usage)
    const choice = Array.isArray(e.choices) && isObject(e.choices[0]) ? e.choices[0] : undefined
    if (choice && typeof choice.finish_reason === 'string') stopReason = choice.finish_reason
  }
  return { usage, stopReason }
}

const NOTHING: AnswerFacts = { usage: null, stopReason: null, streamError: null }

/** Usage and stop reason from a decoded response body; `sse` when it was an event stream. */
export function answerFacts(dialect: DialectName, body: Buffer, sse: boolean): AnswerFacts {
  const text = body.toString('utf8')
  if (sse) return fromSse(dialect, sseEvents(text))
  try {
    const v = JSON.parse(text) as Json
    return isObject(v) ? { ...fromJson(dialect, v), streamError: null } : NOTHING
  } catch {
    // A non-JSON answer (an HTML error page from a gateway) reports nothing.
    return NOTHING
  }
}
