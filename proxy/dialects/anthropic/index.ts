/**
 * The anthropic Messages dialect (`POST /v1/messages`, `count_tokens` beside it): the request's
 * shape and cache facets, its tool format and error envelope here; its answer in `answer.ts`.
 * Invariant: pure reads of an already-parsed body; nothing here re-parses or copies it. A string
 * `system` or message content counts as one text block; an absent one is undefined.
 * https://docs.anthropic.com/en/api/messages
 */
import type { Json, JsonObject } from '../../core/json'
import { isObject } from '../../core/json'
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
import { comparison } from './diagnostics'

/** A string content as the one text block it stands for; arrays as they are; anything else as given. */
export function asBlocks(v: Json | undefined): Json | undefined {
  return typeof v === 'string' ? [{ type: 'text', text: v }] : v
}

/** The head facet: the content of `message` as blocks (undefined message → undefined, no content → []). */
export function headOf(message: Json | undefined): Json[] | undefined {
  if (message === undefined) return undefined
  const content = isObject(message) ? asBlocks(message.content) : undefined
  return Array.isArray(content) ? content : []
}

function marked(v: Json | undefined): number {
  return isObject(v) && v.cache_control !== undefined ? 1 : 0
}

function sumMarked(items: Json | undefined): number {
  return arrayOf(items).reduce<number>((n, item) => n + marked(item), 0)
}

/** Rows with `dialect: anthropic`: the path goes after the base URL; a row's key is `x-api-key`. */
export const anthropicRows: RowFamily = {
  name: 'anthropic',
  priceProvider: 'anthropic',
  upstreamUrl: (baseUrl, incoming) => new URL(baseUrl.replace(/\/+$/, '') + incoming),
  authHeaders: (key) => ({ 'x-api-key': key }),
}

const first = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v)

export const anthropic: Dialect = {
  name: 'anthropic',
  endpoint: '/v1/messages',
  countTokensEndpoint: '/v1/messages/count_tokens',
  /** The rest of `/v1/` beside openai's, and Claude Code's connectivity probe (`HEAD /api/hello`). */
  passThrough: {
    under: ['/v1/'],
    probes: ['/api/hello'],
    claims: { headers: ['anthropic-version'], prefixes: ['/v1/messages', '/v1/complete'] },
  },
  rows: anthropicRows,
  transcriptField: 'messages',
  requiredHeaders: { 'anthropic-version': '2023-06-01' },
  maxTokensField: 'max_tokens',

  facets(body, headers): Facets {
    const messages = body.messages
    return {
      model: body.model,
      system: asBlocks(body.system),
      head: headOf(Array.isArray(messages) ? messages[0] : undefined),
      tools: Array.isArray(body.tools) ? body.tools : undefined,
      keying: {
        tool_choice: body.tool_choice,
        thinking: body.thinking,
        'header:anthropic-beta': headers['anthropic-beta'],
      },
    }
  },

  keyingHeaders(headers): Record<string, string> {
    const beta = first(headers['anthropic-beta'])
    return beta === undefined ? {} : { 'anthropic-beta': beta }
  },

  messages(body) {
    return arrayOf(body.messages)
  },

  transcript(body) {
    return arrayOf(body.messages)
  },

  systemText(body) {
    return contentText(body.system)
  },

  textOf(entry) {
    return isObject(entry) ? contentText(entry.content) : ''
  },

  roleOf(entry) {
    return isObject(entry) && typeof entry.role === 'string' ? entry.role : undefined
  },

  tool(def): JsonObject {
    return { name: def.name, description: def.description, input_schema: def.input_schema }
  },

  clientMaxTokens(body) {
    return body.max_tokens
  },

  checkShape(body) {
    return firstProblem(body, ANTHROPIC_SHAPE)
  },

  toolName(tool) {
    return isObject(tool) && typeof tool.name === 'string' ? tool.name : undefined
  },

  calledToolNames(body) {
    return namesCalled(body, (m) =>
      arrayOf(m.content).map((b) => (isObject(b) && b.type === 'tool_use' ? b.name : undefined)),
    )
  },

  breakpoints(body) {
    let n = marked(body) + sumMarked(body.tools)
    if (Array.isArray(body.system)) n += sumMarked(body.system)
    for (const m of arrayOf(body.messages)) if (isObject(m)) n += sumMarked(m.content)
    return n
  },

  cacheComparison: comparison,
  answerFacts,
  rebuildReply,
  firstRequest,

  errorBody(type, message) {
    return Buffer.from(JSON.stringify({ type: 'error', error: { type, message } }))
  },
}

/** A content block as the proxy reads it: its type, text, tool name, marker. */
const block = fields({ type: str, text: str, name: str, cache_control: obj })
const content = oneOf('a string or an array of content blocks', {
  string: true,
  array: arrayOfChecked(block, 'content blocks'),
})

/** The fields of a Messages request that compose, the hold, the record and usage read. */
export const ANTHROPIC_SHAPE: Readonly<Record<string, Check>> = {
  model: str,
  messages: arrayOfChecked(fields({ role: str, content }), 'message objects'),
  system: oneOf('a string or an array of text blocks', {
    string: true,
    array: arrayOfChecked(block, 'text blocks'),
  }),
  tools: arrayOfChecked(fields({ name: str, cache_control: obj }, ['name']), 'tool objects with a name'),
  tool_choice: obj,
  thinking: obj,
  stream: bool,
  max_tokens: num,
  metadata: obj,
  cache_control: obj,
}
