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
import { arrayOf, namesCalled } from './shared'
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
