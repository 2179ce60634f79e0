/**
 * The openai Chat Completions dialect (`POST /v1/chat/completions`): facets for the hold, tool
 * format, error envelope. Invariant: `system` is the leading `system`/`developer` messages and the
 * head is the first message after them; a null content (an assistant turn of tool calls) is `[]`.
 * No cache breakpoints exist here (caching is automatic), so `breakpoints` is always 0.
 * https://platform.openai.com/docs/api-reference/chat/create
 */
import type { Json, JsonObject } from '../core/json'
import { isObject } from '../core/json'
import type { LoadedEntry } from '../core/loaded-set'
import { presentedName } from '../core/loaded-set'
import { headOf } from './anthropic'
import {
  arrayOf,
  arrayOfChecked,
  bool,
  type Check,
  fields,
  firstProblem,
  namesCalled,
  num,
  oneOf,
  obj,
  str,
} from './shared'
import type { Dialect, Facets } from './types'

function isSystemMessage(m: Json | undefined): boolean {
  return isObject(m) && (m.role === 'system' || m.role === 'developer')
}

export const openai: Dialect = {
  name: 'openai',
  maxTokensField: 'max_completion_tokens',

  facets(body): Facets {
    const messages = arrayOf(body.messages)
    let split = 0
    while (split < messages.length && isSystemMessage(messages[split])) split++
    return {
      model: body.model,
      system: messages.slice(0, split),
      head: headOf(messages[split]),
      tools: Array.isArray(body.tools) ? body.tools : undefined,
      keying: { tool_choice: body.tool_choice, parallel_tool_calls: body.parallel_tool_calls },
    }
  },

  presentTool(entry: LoadedEntry): JsonObject {
    return {
      type: 'function',
      function: {
        name: presentedName(entry),
        description: entry.tool.description,
        parameters: entry.tool.input_schema,
      },
    }
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

  closureTool(name, description) {
    return { type: 'function', function: { name, description, parameters: { type: 'object' } } }
  },

  breakpoints() {
    return 0
  },

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
