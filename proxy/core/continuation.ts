/**
 * An attempt's first request (DESIGN §9): the notch's recorded request, then the notch's reply as
 * the assistant turn, then one user turn — error results for any tool calls the reply made ("not
 * run: this attempt forked here"), the pinned skills' text, and the goal, verbatim. From a clean
 * start, just the goal. Pure. The tools array stays the notch's, so every tool the history names
 * is still declared; thinking blocks are dropped when the model changes (signatures are bound to it).
 */
import { isObject, type Json, type JsonObject } from './json'
import type { Rebuilt } from './reply'

export const NOT_RUN = 'not run: this attempt forked here'
export const DEFAULT_MAX_TOKENS = 4096

export interface FirstRequestInput {
  dialect: 'anthropic' | 'openai'
  /** Absent for a clean start. */
  notch?: { request: JsonObject; reply: Rebuilt | undefined }
  goal: string
  /** Pinned skill files: their destination and text, in pin order. */
  skills: readonly { dest: string; text: string }[]
  /** The role's model (the proxy routes by x-holdfast-role; this decides whether thinking survives). */
  roleModel: string
  roleMaxTokens?: number
}

function userText(skills: FirstRequestInput['skills'], goal: string): string {
  const context = skills.map((s) => `<skill path="${s.dest}">\n${s.text.trimEnd()}\n</skill>\n\n`).join('')
  return context + goal
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

export function firstRequest(input: FirstRequestInput): JsonObject {
  const { dialect, notch } = input
  const text = userText(input.skills, input.goal)
  const maxField = dialect === 'anthropic' ? 'max_tokens' : 'max_completion_tokens'
  if (!notch) {
    const body: JsonObject = {
      model: input.roleModel,
      [maxField]: input.roleMaxTokens ?? DEFAULT_MAX_TOKENS,
      stream: true,
      messages: [{ role: 'user', content: text }],
    }
    if (dialect === 'openai') body.stream_options = { include_usage: true }
    return body
  }
  const req = notch.request
  const sameModel = req.model === input.roleModel
  let messages: Json[] = Array.isArray(req.messages) ? [...req.messages] : []
  const reply = notch.reply
  if (reply) messages.push(reply.message)
  const calls = reply?.toolCalls ?? []
  if (dialect === 'anthropic') {
    const content: Json[] = calls.map((c) => ({
      type: 'tool_result',
      tool_use_id: c.id,
      is_error: true,
      content: NOT_RUN,
    }))
    content.push({ type: 'text', text })
    messages.push({ role: 'user', content })
    if (!sameModel) messages = withoutThinking(messages)
  } else {
    for (const c of calls) messages.push({ role: 'tool', tool_call_id: c.id, content: NOT_RUN })
    messages.push({ role: 'user', content: text })
  }
  const notchMax = req[maxField] ?? (dialect === 'openai' ? req.max_tokens : undefined)
  const body: JsonObject = { ...req, messages, stream: true }
  if (notchMax === undefined) body[maxField] = input.roleMaxTokens ?? DEFAULT_MAX_TOKENS
  if (dialect === 'openai') body.stream_options = { include_usage: true }
  return body
}
