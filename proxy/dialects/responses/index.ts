/**
 * The OpenAI Responses dialect (`POST /v1/responses`), sent to the openai rows: the request's shape
 * and cache facets, its tool format and error envelope here; its answer in `answer.ts`, its input
 * items in `items.ts`, its WebSocket frames in `frames.ts`. Invariant: the cache reads tools → instructions → input, so the system is
 * `instructions` plus the leading `system`/`developer` input items (Codex sends no `instructions`:
 * its base prompt is the first developer item) and the head is the first item after them. Caching
 * is automatic (explicit `prompt_cache_breakpoint` markers sit on content parts, never on tools),
 * so `breakpoints` is 0. A field the API accepts as null reads as absent.
 * https://platform.openai.com/docs/api-reference/responses/create
 */
import type { Json, JsonObject } from '../../core/json'
import { isObject } from '../../core/json'
import { openai, openaiRows } from '../openai'
import {
  arrayOfChecked,
  bool,
  type Check,
  contentText,
  fields,
  firstProblem,
  num,
  obj,
  oneOf,
  orNull,
  str,
} from '../shared'
import type { Dialect, Facets } from '../../core/dialect'
import { answerFacts, firstRequest, rebuildReply } from './answer'
import { responsesFrames } from './frames'
import { comparison } from './diagnostics'
import { asCached, headOf, inputItems, isMessage, partsOf, systemEnd } from './items'

/**
 * The request fields besides tools, system and head that key the cache. `reasoning` (its effort)
 * and `text` (a structured output schema is a prefix of the system message) change what the model
 * reads first; `previous_response_id`, `conversation` and `prompt` put stored items or a stored
 * prompt ahead of `input`; `prompt_cache_key` routes to a cache. `truncation` and `include` do not
 * change the prefix.
 */
const KEYING = [
  'tool_choice',
  'parallel_tool_calls',
  'previous_response_id',
  'conversation',
  'prompt',
  'prompt_cache_key',
  'reasoning',
  'text',
] as const

/** Function calls and custom tool calls name a top-level tool; a namespaced call names one inside a namespace. */
const CALL_TYPES = new Set(['function_call', 'custom_tool_call'])
/** Tools that must name themselves (hosted tools such as `web_search` have no name). */
const NAMED_TOOLS = new Set(['function', 'custom', 'namespace'])

export const responses: Dialect = {
  name: 'responses',
  endpoint: '/v1/responses',
  /** Counts a create request's input tokens; compose and the hold apply, so it counts what the next step sends. */
  countTokensEndpoint: '/v1/responses/input_tokens',
  rows: openaiRows,
  requiredHeaders: {},
  transcriptField: 'input',
  maxTokensField: 'max_output_tokens',
  promptCacheKeyField: 'prompt_cache_key',

  facets(body): Facets {
    const items = inputItems(body.input)
    const split = systemEnd(items)
    const instructions = body.instructions ?? null
    const keying: Record<string, Json | undefined> = {}
    for (const field of KEYING) keying[field] = body[field] ?? undefined
    return {
      model: body.model,
      system: {
        instructions: Array.isArray(instructions)
          ? instructions.map(asCached)
          : typeof instructions === 'string'
            ? partsOf(instructions, 'developer')
            : null,
        input: items.slice(0, split).map(asCached),
      },
      head: headOf(items[split]),
      tools: Array.isArray(body.tools) ? body.tools : undefined,
      keying,
    }
  },

  keyingHeaders() {
    return {}
  },

  messages(body) {
    return inputItems(body.input)
  },

  transcript(body) {
    const items = inputItems(body.input)
    return items.slice(systemEnd(items)).map(asCached)
  },

  systemText(body) {
    const items = inputItems(body.input)
    const instructions = typeof body.instructions === 'string' ? body.instructions : ''
    return (
      instructions +
      items
        .slice(0, systemEnd(items))
        .map((m) => responses.textOf(m))
        .join('')
    )
  },

  textOf(entry) {
    return isMessage(entry) ? contentText(entry.content) : ''
  },

  roleOf: openai.roleOf,

  /** Responses function tools are flat: `{type: "function", name, description, parameters}`. */
  tool(def): JsonObject {
    return { type: 'function', name: def.name, description: def.description, parameters: def.input_schema }
  },

  clientMaxTokens(body) {
    return body.max_output_tokens ?? undefined
  },

  checkShape(body) {
    return firstProblem(body, RESPONSES_SHAPE)
  },

  /** `name` of function, custom and namespace tools; hosted tools (`web_search`, …) have none. */
  toolName(tool) {
    return isObject(tool) && typeof tool.name === 'string' ? tool.name : undefined
  },

  calledToolNames(body) {
    const names = new Set<string>()
    for (const item of inputItems(body.input)) {
      if (!isObject(item) || !CALL_TYPES.has(String(item.type)) || item.namespace !== undefined) continue
      if (typeof item.name === 'string') names.add(item.name)
    }
    return [...names]
  },

  breakpoints() {
    return 0
  },

  cacheComparison: comparison,
  answerFacts,
  rebuildReply,
  firstRequest,

  errorBody: openai.errorBody,
  socket: responsesFrames,
}

const part = fields({ type: str, text: str })
const content = oneOf('a string or an array of content parts', {
  string: true,
  array: arrayOfChecked(part, 'content parts'),
})

/** An input item: its type and role; a message's content; a call's name. */
const item: Check = (v, at) => {
  const bad = fields({ type: str, role: str })(v, at)
  if (bad !== undefined) return bad
  if (isMessage(v)) return fields({ content })(v, at)
  if (isObject(v) && CALL_TYPES.has(String(v.type))) return fields({ name: str, namespace: str })(v, at)
  return undefined
}
const items = arrayOfChecked(item, 'input items')

/** A tool element: function, custom and namespace tools name themselves. */
const tool: Check = (v, at) => {
  const bad = fields({ type: str, name: str })(v, at)
  if (bad !== undefined) return bad
  const named = isObject(v) && NAMED_TOOLS.has(String(v.type))
  return named && responses.toolName(v) === undefined ? `${at} must name its tool (name)` : undefined
}

/** The fields of a Responses request that compose, the hold, the record and a later step read. */
export const RESPONSES_SHAPE: Readonly<Record<string, Check>> = {
  model: str,
  input: oneOf('a string or an array of input items', { string: true, array: items, null: true }),
  instructions: oneOf('a string or an array of input items', { string: true, array: items, null: true }),
  tools: orNull(arrayOfChecked(tool, 'tool objects')),
  tool_choice: oneOf('a string or an object', { string: true, object: true }),
  parallel_tool_calls: orNull(bool),
  stream: orNull(bool),
  store: orNull(bool),
  previous_response_id: orNull(str),
  conversation: oneOf('a string or an object', { string: true, object: true, null: true }),
  prompt: orNull(obj),
  prompt_cache_key: orNull(str),
  max_output_tokens: orNull(num),
  reasoning: orNull(obj),
  text: orNull(obj),
}
