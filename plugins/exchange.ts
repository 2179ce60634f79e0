/**
 * The plugin's view of one request: frozen, with a body that throws on any write and a summary
 * computed once per request, lazily, from the body holdfast already parsed (never a re-parse).
 * Invariant: a live view and a replayed one are built by the same code from the same inputs
 * (parsed body, body size, headers as recorded), so replay decides what the live plugin decided.
 */
import { randomUUID } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'
import { sanitizeHeaders } from '../proxy/core/headers'
import { once } from '../proxy/core/once'
import { isObject, type Json, type JsonObject } from '../proxy/core/json'
import { anthropic, dialectByName, type DialectName } from '../proxy/dialects'
import { arrayOf } from '../proxy/dialects/shared'
import type { DeepReadonly, Exchange, ExchangeSummary, ResponseView, RouteView } from './api'

const MAX_USER_TEXT = 8192
const READ_ONLY =
  'the exchange is read-only: a plugin decides by returning a value, never by editing the request'

const views = new WeakMap<object, object>()
const readOnlyHandler: ProxyHandler<object> = {
  get(target, key, receiver) {
    const v: unknown = Reflect.get(target, key, receiver)
    return typeof v === 'object' && v !== null ? readOnly(v) : v
  },
  set() {
    throw new TypeError(READ_ONLY)
  },
  defineProperty() {
    throw new TypeError(READ_ONLY)
  },
  deleteProperty() {
    throw new TypeError(READ_ONLY)
  },
  setPrototypeOf() {
    throw new TypeError(READ_ONLY)
  },
}

/** A read-only view of `value`, wrapped lazily as it is walked (nothing is copied). */
function readOnly<T extends object>(value: T): DeepReadonly<T> {
  let v = views.get(value)
  if (!v) views.set(value, (v = new Proxy(value, readOnlyHandler)))
  return v as DeepReadonly<T>
}

/** Bytes of base64 payloads (images, documents, audio) in message content, two levels deep. */
function base64Bytes(content: Json | undefined, depth = 0): number {
  let n = 0
  for (const b of arrayOf(content)) {
    if (!isObject(b)) continue
    const src = b.source
    if (isObject(src) && src.type === 'base64' && typeof src.data === 'string') n += src.data.length
    // Chat Completions nests the data URL and file data; Responses parts carry them flat.
    const url = isObject(b.image_url) ? b.image_url.url : b.image_url
    if (typeof url === 'string' && url.startsWith('data:')) n += url.length
    if (isObject(b.input_audio) && typeof b.input_audio.data === 'string') n += b.input_audio.data.length
    const file = isObject(b.file) ? b.file.file_data : b.file_data
    if (typeof file === 'string') n += file.length
    if (depth < 1) n += base64Bytes(b.content, depth + 1)
  }
  return n
}

/** The summary of a parsed body of `bodyBytes` bytes; `headers` as recorded. */
export function summarize(
  dialectName: DialectName,
  body: JsonObject,
  bodyBytes: number,
  headers: Readonly<Record<string, string>>,
): ExchangeSummary {
  const dialect = dialectByName(dialectName)
  const messages = dialect.messages(body)
  const systemChars = dialect.systemText(body).length
  const toolNames = arrayOf(body.tools)
    .map((t) => dialect.toolName(t))
    .filter((n): n is string => n !== undefined)
  const max = dialect.clientMaxTokens(body)
  // The two fields that walk the whole transcript are computed only when a plugin reads them.
  const approxTokens = once(() => {
    let media = 0
    for (const m of messages) if (isObject(m)) media += base64Bytes(m.content)
    return Math.ceil(Math.max(0, bodyBytes - media) / 4)
  })
  const lastUserText = once(() => {
    for (let i = messages.length - 1; i >= 0; i--) {
      const m = messages[i] as Json
      if (dialect.roleOf(m) === 'user') {
        const text = dialect.textOf(m)
        if (text) return text.slice(0, MAX_USER_TEXT)
      }
    }
    return ''
  })
  return Object.freeze({
    get approxTokens() {
      return approxTokens()
    },
    toolNames: Object.freeze(toolNames),
    get lastUserText() {
      return lastUserText()
    },
    headers: Object.isFrozen(headers) ? headers : Object.freeze({ ...headers }),
    model: typeof body.model === 'string' ? body.model : null,
    maxTokens: typeof max === 'number' ? max : null,
    messageCount: messages.length,
    systemChars,
    stream: body.stream === true,
  })
}

interface ViewParts {
  id: string
  dialect: DialectName
  kind: 'step' | 'count_tokens'
  path: string
  workspace: string
  agent: string
  body: JsonObject
  route: RouteView | null
  response: ResponseView | null
  replay: boolean
}

/** The headers and the summary of one request, each computed on first read, once. */
export interface Lazy {
  headers: () => Readonly<Record<string, string>>
  summary: () => ExchangeSummary
}

/** Headers sanitized as meta.json records them (cheap); the summary only when a plugin reads it. */
export function lazily(
  dialect: DialectName,
  body: JsonObject,
  bytes: number,
  headers: IncomingHttpHeaders | (() => Readonly<Record<string, string>>),
): Lazy {
  // A live exchange hands its own memo, so meta.json and plugins sanitize the headers once.
  const clean = typeof headers === 'function' ? headers : once(() => Object.freeze(sanitizeHeaders(headers)))
  return { headers: clean, summary: once(() => summarize(dialect, body, bytes, clean())) }
}

/**
 * A frozen view; `summary` and `headers` (the same object as `summary.headers`) read lazily. One
 * object literal of fixed shape: spread first and getters after, V8 built every view through its
 * slow path (bench/identify.ts: 8–10 µs per begin + identify, 3.5–4 as one literal; the built-in
 * claude-code plugin makes a view for every request).
 */
export function createView(parts: ViewParts, lazy: Lazy): Exchange {
  const { route, response } = parts
  return Object.freeze({
    id: parts.id,
    dialect: parts.dialect,
    kind: parts.kind,
    path: parts.path,
    workspace: parts.workspace,
    agent: parts.agent,
    replay: parts.replay,
    body: readOnly(parts.body),
    route: route && Object.freeze({ ...route }),
    response:
      response &&
      Object.freeze({ ...response, usage: response.usage && Object.freeze({ ...response.usage }) }),
    get summary() {
      return lazy.summary()
    },
    get headers() {
      return lazy.headers()
    },
  })
}

export interface ExchangeInit {
  body: JsonObject
  headers?: IncomingHttpHeaders | Record<string, string>
  dialect?: DialectName
  kind?: 'step' | 'count_tokens'
  path?: string
  workspace?: string
  agent?: string
  route?: Partial<RouteView> | null
  response?: ResponseView | null
  /** Body size in bytes, when known (replay: request.json's size); else the body's JSON length. */
  bytes?: number
}

/**
 * An exchange for plugin tests and replay, built exactly as a live one (headers are sanitized
 * the way meta.json records them). Defaults: anthropic, `/v1/messages`, `default`/`main`.
 * @example
 * await runPlugin(plugin, { threshold: 10 }).route(exchange({ body: { model: 'm', messages: [] } }))
 */
export function exchange(init: ExchangeInit): Exchange {
  const dialect = init.dialect ?? anthropic.name
  const lower: IncomingHttpHeaders = {}
  for (const [k, v] of Object.entries(init.headers ?? {})) lower[k.toLowerCase()] = v
  const bytes = init.bytes ?? Buffer.byteLength(JSON.stringify(init.body))
  const route = init.route
    ? { provider: dialect, model: null, role: null, plugin: null, ...init.route }
    : null
  return createView(
    {
      id: randomUUID(),
      dialect,
      kind: init.kind ?? 'step',
      path: init.path ?? dialectByName(dialect).endpoint,
      workspace: init.workspace ?? 'default',
      agent: init.agent ?? 'main',
      body: init.body,
      route,
      response: init.response ?? null,
      replay: true,
    },
    lazily(dialect, init.body, bytes, lower),
  )
}
