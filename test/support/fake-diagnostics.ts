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
 */
import { canonical, type Json, type JsonObject } from './fake-wire'

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
