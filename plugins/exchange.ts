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

const refuse = (): never => {
  throw new TypeError(READ_ONLY)
}
const REFUSALS = { set: refuse, defineProperty: refuse, deleteProperty: refuse, setPrototypeOf: refuse }

/**
 * A read-only view of `root`, wrapped lazily as it is walked (nothing is copied); the same object
 * gives the same proxy within one view. The proxies are kept by the view, not in a module-wide
 * WeakMap: a WeakMap outlives every request, and a young collection kept each request's parsed
 * body alive through its entry (the entry's value, the proxy, points at its own key) until a full
 * collection (docs/benchmarks.md, "Collections at c=1").
 */
function readOnly<T extends object>(root: T): DeepReadonly<T> {
  const proxies = new Map<object, object>()
  const wrap = (value: object): object => {
    let p = proxies.get(value)
    if (!p) proxies.set(value, (p = new Proxy(value, handler)))
    return p
  }
  const handler: ProxyHandler<object> = {
    get(target, key, receiver) {
      const v: unknown = Reflect.get(target, key, receiver)
      return typeof v === 'object' && v !== null ? wrap(v) : v
    },
    ...REFUSALS,
  }
  return wrap(root) as DeepReadonly<T>
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
  return new Summary(
    { approxTokens, lastUserText },
    {
      toolNames: Object.freeze(toolNames),
      headers: Object.isFrozen(headers) ? headers : Object.freeze({ ...headers }),
      model: typeof body.model === 'string' ? body.model : null,
      maxTokens: typeof max === 'number' ? max : null,
      messageCount: messages.length,
      systemChars,
      stream: body.stream === true,
    },
  )
}

/**
 * What a view or a summary computes on first read, behind own getters that are defined once for
 * all of them (`LAZY`) and call the thunks each object keeps here. An object literal's getters are
 * new closures each time: no two views shared a hidden class (V8 kept each in dictionary mode), and
 * with such views a young collection freed nothing they reached: the request's parsed body was
 * promoted, as much as the request itself on the server thread (docs/benchmarks.md, "Collections at c=1").
 */
class LazyFields {
  readonly #thunks: Readonly<Record<string, () => unknown>>

  constructor(thunks: Readonly<Record<string, () => unknown>>) {
    this.#thunks = thunks
  }

  static read(o: LazyFields, name: string): unknown {
    return o.#thunks[name]?.()
  }
}

/** An own, enumerable getter of `name`, the same function for every object that has it. */
const lazyField = (name: string): PropertyDescriptor => ({
  get(this: LazyFields) {
    return LazyFields.read(this, name)
  },
  enumerable: true,
})
const LAZY = {
  approxTokens: lazyField('approxTokens'),
  lastUserText: lazyField('lastUserText'),
  summary: lazyField('summary'),
  headers: lazyField('headers'),
}
/** A view's two: last, after its own fields. */
const VIEW_LAZY = { summary: LAZY.summary, headers: LAZY.headers }

type Eager = Omit<ExchangeSummary, 'approxTokens' | 'lastUserText'>

/** An ExchangeSummary: its two transcript walks run on first read. Fields in ExchangeSummary's order. */
class Summary extends LazyFields implements ExchangeSummary {
  declare readonly approxTokens: number
  declare readonly toolNames: readonly string[]
  declare readonly lastUserText: string
  declare readonly headers: Readonly<Record<string, string>>
  declare readonly model: string | null
  declare readonly maxTokens: number | null
  declare readonly messageCount: number
  declare readonly systemChars: number
  declare readonly stream: boolean

  constructor(thunks: { approxTokens: () => number; lastUserText: () => string }, f: Eager) {
    super(thunks)
    Object.defineProperty(this, 'approxTokens', LAZY.approxTokens)
    this.toolNames = f.toolNames
    Object.defineProperty(this, 'lastUserText', LAZY.lastUserText)
    this.headers = f.headers
    this.model = f.model
    this.maxTokens = f.maxTokens
    this.messageCount = f.messageCount
    this.systemChars = f.systemChars
    this.stream = f.stream
    Object.freeze(this)
  }
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
 * A frozen view; `summary` and `headers` (the same object as `summary.headers`) read lazily. Its
 * fields are own properties in one order, the two lazy ones last (bench/identify.ts measures a
 * view per request: the built-in claude-code plugin makes one for every request).
 */
export function createView(parts: ViewParts, lazy: Lazy): Exchange {
  return new View(parts, lazy)
}

class View extends LazyFields implements Exchange {
  readonly id: string
  readonly dialect: DialectName
  readonly kind: 'step' | 'count_tokens'
  readonly path: string
  readonly workspace: string
  readonly agent: string
  readonly replay: boolean
  readonly body: DeepReadonly<JsonObject>
  readonly route: RouteView | null
  readonly response: ResponseView | null
  declare readonly summary: ExchangeSummary
  declare readonly headers: Readonly<Record<string, string>>

  constructor(parts: ViewParts, lazy: Lazy) {
    super({ summary: lazy.summary, headers: lazy.headers })
    const { route, response } = parts
    this.id = parts.id
    this.dialect = parts.dialect
    this.kind = parts.kind
    this.path = parts.path
    this.workspace = parts.workspace
    this.agent = parts.agent
    this.replay = parts.replay
    this.body = readOnly(parts.body)
    this.route = route && Object.freeze({ ...route })
    this.response =
      response &&
      Object.freeze({ ...response, usage: response.usage && Object.freeze({ ...response.usage }) })
    Object.defineProperties(this, VIEW_LAZY)
    Object.freeze(this)
  }
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
 * the way meta.json records them). Defaults: anthropic at its endpoint, `default`/`main`.
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
