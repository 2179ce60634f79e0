/**
 * The fake's Anthropic cache diagnostics, as documented
 * (https://platform.claude.com/docs/en/build-with-claude/cache-diagnostics): a request that carries
 * a `diagnostics` object leaves a fingerprint under its answer's id; one that names an earlier
 * answer in `diagnostics.previous_message_id` is compared with that fingerprint, model → system →
 * tools → messages, and the answer carries `diagnostics`: null when the id was null or nothing
 * diverged, else `{cache_miss_reason: {type, cache_missed_input_tokens}}` (`model_changed`,
 * `system_changed`, `tools_changed`, `messages_changed`, `previous_message_not_found`). A request
 * without the object gets no field and leaves nothing. The tokens missed are those from the first
 * divergence on, in the cache's order (tools → system → messages), ~4 bytes a token; `cache_control`
 * markers are not part of a fingerprint (a breakpoint that moves is no divergence).
 *
 * And OpenAI's, for the Responses API
 * (https://developers.openai.com/api/docs/guides/prompt-caching/diagnostics): every response
 * leaves a fingerprint under its id; a request naming one in
 * `prompt_cache_options.comparison_response_id` gets `prompt_cache_diagnostics` on its response
 * (the JSON body, and the final `response` of a stream): `{type: "cache_hit"}` when nothing
 * diverged, `{type: "comparison_response_not_found"}` for an unknown id, else `{type:
 * "cache_miss", reason, cache_missed_tokens, comparison_reusable_tokens}` with the first of
 * `model_changed`, `prompt_cache_key_changed`, `tools_changed`, `text_format_changed`,
 * `reasoning_effort_changed`, `input_changed` (instructions are input: the API names no part of
 * its own for them).
 */
import { canonical, isObject, type Json, type JsonObject } from './fake-wire'

const BYTES_PER_TOKEN = 4

interface Fingerprint {
  model: string
  tools: string
  system: string
  messages: string[]
}

/** A value without its `cache_control` markers: where a breakpoint sits changes no prefix. */
function unmarked(v: Json): Json {
  if (Array.isArray(v)) return v.map(unmarked)
  if (v === null || typeof v !== 'object') return v
  const out: JsonObject = {}
  for (const [k, x] of Object.entries(v)) if (k !== 'cache_control') out[k] = unmarked(x)
  return out
}

/** A string content as the one text block it stands for. */
const blocks = (content: Json): Json =>
  typeof content === 'string' ? [{ type: 'text', text: content }] : (content ?? [])

const tokens = (s: string): number => Math.ceil(Buffer.byteLength(s) / BYTES_PER_TOKEN)

export function fingerprintOf(request: JsonObject, model: string): Fingerprint {
  const messages = Array.isArray(request.messages) ? request.messages : []
  return {
    model,
    tools: canonical(unmarked(request.tools ?? [])),
    system: canonical(unmarked(blocks(request.system ?? []))),
    messages: messages.map((m) =>
      canonical(
        unmarked(
          m !== null && typeof m === 'object' && !Array.isArray(m)
            ? { ...m, content: blocks(m.content ?? null) }
            : m,
        ),
      ),
    ),
  }
}

const total = (f: Fingerprint): number =>
  tokens(f.tools) + tokens(f.system) + f.messages.reduce((a, m) => a + tokens(m), 0)

const miss = (type: string, missed: number): Json => ({
  cache_miss_reason: { type, cache_missed_input_tokens: missed },
})

export class DiagnosticsStore {
  private readonly byId = new Map<string, Fingerprint>()

  /** The answer's `diagnostics` for `request` (undefined: it asked for none), remembering it as `id`. */
  answer(request: JsonObject, model: string, id: string): Json | undefined {
    const asked = request.diagnostics
    if (asked === null || typeof asked !== 'object' || Array.isArray(asked)) return undefined
    const now = fingerprintOf(request, model)
    this.byId.set(id, now)
    const previous = (asked as JsonObject).previous_message_id
    if (typeof previous !== 'string') return null
    const was = this.byId.get(previous)
    if (!was) return miss('previous_message_not_found', total(now))
    if (was.model !== now.model) return miss('model_changed', total(now))
    if (was.system !== now.system) return miss('system_changed', total(now) - tokens(now.tools))
    if (was.tools !== now.tools) return miss('tools_changed', total(now))
    const kept = now.messages.findIndex((m, i) => i < was.messages.length && m !== was.messages[i])
    if (kept >= 0) {
      const after = now.messages.slice(kept).reduce((a, m) => a + tokens(m), 0)
      return miss('messages_changed', after)
    }
    return null
  }

  clear(): void {
    this.byId.clear()
  }
}

interface ResponsesFingerprint {
  model: string
  key: string
  tools: string
  format: string
  effort: string
  /** Instructions, then the context items, each rendered. */
  input: string[]
}

/** The fake's Responses diagnostics: fingerprints by response id, compared on request. */
export class ResponsesDiagnosticsStore {
  private readonly byId = new Map<string, ResponsesFingerprint>()

  /** The response's `prompt_cache_diagnostics` (undefined: not asked), remembering this one as `id`. */
  answer(request: JsonObject, model: string, id: string, context: Json[]): Json | undefined {
    const text = isObject(request.text) ? request.text : {}
    const reasoning = isObject(request.reasoning) ? request.reasoning : {}
    const now: ResponsesFingerprint = {
      model,
      key: canonical(request.prompt_cache_key ?? null),
      tools: canonical(request.tools ?? []),
      format: canonical(text.format ?? null),
      effort: canonical(reasoning.effort ?? null),
      input: [canonical(request.instructions ?? null), ...context.map((item) => canonical(item))],
    }
    this.byId.set(id, now)
    const options = isObject(request.prompt_cache_options) ? request.prompt_cache_options : {}
    const baseline = options.comparison_response_id
    if (typeof baseline !== 'string') return undefined
    const was = this.byId.get(baseline)
    if (!was) return { type: 'comparison_response_not_found' }
    const sum = (parts: string[]): number => parts.reduce((a, x) => a + tokens(x), 0)
    const all = (f: ResponsesFingerprint): number => tokens(f.tools) + tokens(f.format) + sum(f.input)
    const miss = (reason: string, missed: number): Json => ({
      type: 'cache_miss',
      reason,
      cache_missed_tokens: missed,
      comparison_reusable_tokens: all(was),
    })
    if (was.model !== now.model) return miss('model_changed', all(now))
    if (was.key !== now.key) return miss('prompt_cache_key_changed', all(now))
    if (was.tools !== now.tools) return miss('tools_changed', all(now))
    if (was.format !== now.format) return miss('text_format_changed', all(now) - tokens(now.tools))
    if (was.effort !== now.effort) return miss('reasoning_effort_changed', all(now))
    const at = now.input.findIndex((x, i) => i < was.input.length && x !== was.input[i])
    if (at >= 0) return miss('input_changed', sum(now.input.slice(at)))
    return { type: 'cache_hit' }
  }

  clear(): void {
    this.byId.clear()
  }
}
