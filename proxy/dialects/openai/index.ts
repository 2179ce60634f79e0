/**
 * The openai Chat Completions dialect (`POST /v1/chat/completions`): the request's shape and cache
 * facets, its tool format and error envelope here; its answer in `answer.ts`. Invariant: `system`
 * is the leading `system`/`developer` messages and the head is the first message after them; a
 * null content (an assistant turn of tool calls) is `[]`. No cache breakpoints exist here
 * (caching is automatic), so `breakpoints` is always 0.
 * https://platform.openai.com/docs/api-reference/chat/create
 */
import type { Json, JsonObject } from '../../core/json'
import { isObject } from '../../core/json'
import { headOf } from '../anthropic'
import {
  arrayOf,
  arrayOfChecked,
  bool,
  type Check,
  contentText,
  fields,
  firstProblem,
  namesCalled,
  num,
  oneOf,
  obj,
  str,
} from '../shared'
import type { Dialect, Facets, RowFamily } from '../../core/dialect'
import { answerFacts, firstRequest, rebuildReply } from './answer'

/** Rows with `dialect: openai`: their base URL carries `/v1` already; a row's key is a bearer token. */
export const openaiRows: RowFamily = {
  name: 'openai',
  priceProvider: 'openai',
  upstreamUrl(baseUrl, incoming) {
    const base = baseUrl.replace(/\/+$/, '')
    return new URL(base + (/^\/v1(\/|\?|$)/.test(incoming) ? incoming.slice(3) : incoming))
  },
  authHeaders: (key) => ({ authorization: `Bearer ${key}` }),
}

function isSystemMessage(m: Json | undefined): boolean {
  return isObject(m) && (m.role === 'system' || m.role === 'developer')
}

/** Where the system part (the leading system/developer messages) ends. */
function systemEnd(messages: readonly Json[]): number {
  let split = 0
  while (split < messages.length && isSystemMessage(messages[split])) split++
  return split
}

export const openai: Dialect = {
  name: 'openai',
  endpoint: '/v1/chat/completions',
  /** The rest of `/v1/` that anthropic does not claim (`/v1/models`, `/v1/embeddings`, …). */
  passThrough: { under: ['/v1/'], probes: [] },
  rows: openaiRows,
  transcriptField: 'messages',
  requiredHeaders: {},
  maxTokensField: 'max_completion_tokens',
  promptCacheKeyField: 'prompt_cache_key',

  facets(body): Facets {
    const messages = arrayOf(body.messages)
    const split = systemEnd(messages)
    return {
      model: body.model,
      system: messages.slice(0, split),
      head: headOf(messages[split]),
      tools: Array.isArray(body.tools) ? body.tools : undefined,
      keying: { tool_choice: body.tool_choice, parallel_tool_calls: body.parallel_tool_calls },
    }
  },

  keyingHeaders() {
    return {}
  },

  messages(body) {
    return arrayOf(body.messages)
  },

  transcript(body) {
    const messages = arrayOf(body.messages)
    return messages.slice(systemEnd(messages))
  },

  systemText(body) {
    const messages = arrayOf(body.messages)
    return messages
      .slice(0, systemEnd(messages))
      .map((m) => openai.textOf(m))
      .join('')
  },

  textOf(entry) {
    return isObject(entry) ? contentText(entry.content) : ''
  },

  roleOf(entry) {
    return isObject(entry) && typeof entry.role === 'string' ? entry.role : undefined
  },

  tool(def): JsonObject {
    return {
      type: 'function',
      function: { name: def.name, description: def.description, parameters: def.input_schema },
    }
  },

  clientMaxTokens(body) {
    return body.max_completion_tokens ?? body.max_tokens
  },

  checkShape(body) {
    return firstProblem(body, OPENAI_SHAPE)
  },

  /** `function.name` (function tools), `custom.name` (custom tools), else a bare `name`. */
  toolName(tool) {
    if (!isObject(tool)) return undefined
    for (const inner of [tool.function, tool.custom]) {
      if (isObject(inner) && typeof inner.name === 'string') return inner.name
    }
    return typeof tool.name === 'string' ? tool.name : undefined
  },

  calledToolNames(body) {
    return namesCalled(body, (m) => arrayOf(m.tool_calls).map((call) => openai.toolName(call)))
  },

  breakpoints() {
    return 0
  },

  answerFacts,
  rebuildReply,
  firstRequest,

  errorBody(type, message) {
    return Buffer.from(JSON.stringify({ error: { message, type, param: null, code: null } }))
  },
}

const named = fields({ name: str })
/** A tool element: a function or custom tool naming itself (or a bare `name`). */
const tool: Check = (v, at) => {
  const bad = fields({ type: str, function: named, custom: named, name: str })(v, at)
  if (bad) return bad
  return openai.toolName(v) === undefined ? `${at} must name its tool (function.name)` : undefined
}
const part = fields({ type: str, text: str })
const content = oneOf('a string, an array of content parts, or null', {
  string: true,
  array: arrayOfChecked(part, 'content parts'),
  null: true,
})
const toolCall = fields({ type: str, function: named, custom: named })

/** The fields of a Chat Completions request that compose, the hold, the record and usage read. */
export const OPENAI_SHAPE: Readonly<Record<string, Check>> = {
  model: str,
  messages: arrayOfChecked(
    fields({ role: str, content, tool_calls: arrayOfChecked(toolCall, 'tool calls'), name: str }),
    'message objects',
  ),
  tools: arrayOfChecked(tool, 'tool objects'),
  tool_choice: oneOf('a string or an object', { string: true, object: true }),
  parallel_tool_calls: bool,
  stream: bool,
  stream_options: obj,
  prompt_cache_key: str,
  max_tokens: num,
  max_completion_tokens: num,
}
