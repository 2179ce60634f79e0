/**
 * The whole public plugin contract (DESIGN §10): `definePlugin`, `apiVersion`, the hooks, the
 * read-only `Exchange` view with its precomputed `summary`, the decisions hooks return, and the
 * context `setup` receives. Invariant: deciding hooks (`identify`, `route`) answer by returning a
 * value, `undefined` lets the next plugin decide; observing hooks return nothing. A plugin's
 * private files live in `ctx.dataDir` = `<home>/plugins/<name>/`.
 */
import type { DialectName } from '../proxy/core/dialect'

export type { DialectName }

/** The plugin API this holdfast speaks; a plugin declaring another is refused at start. */
export const apiVersion = 1 as const

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
export type JsonObject = { [key: string]: Json }

/** `T` with every property and element read-only, all the way down. */
export type DeepReadonly<T> = T extends (infer U)[]
  ? readonly DeepReadonly<U>[]
  : T extends object
    ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
    : T

type Awaitable<T> = T | Promise<T>

/** Computed once per request from the already-parsed body: plugins never re-parse it. */
export interface ExchangeSummary {
  /** About (body bytes − base64 image/document payloads) / 4: a rule of thumb, not a tokenizer. */
  readonly approxTokens: number
  /** The names the `tools` array declares, in order. */
  readonly toolNames: readonly string[]
  /** Text of the last user message that has text (tool results skipped); at most 8192 characters. */
  readonly lastUserText: string
  /** Request headers as recorded in meta.json: auth and secret-looking headers and x-holdfast-* removed. */
  readonly headers: Readonly<Record<string, string>>
  /** `model` as the client sent it (a role name stays a role name), or null. */
  readonly model: string | null
  /** The dialect's output-token limit as sent (`max_tokens` / `max_completion_tokens` / `max_output_tokens`), or null. */
  readonly maxTokens: number | null
  readonly messageCount: number
  /**
   * Characters of system prompt (anthropic `system`; openai leading system/developer messages;
   * responses `instructions` and leading system/developer input items).
   */
  readonly systemChars: number
  readonly stream: boolean
}

/** Where the request goes: after resolve (in `route`), or where it went (in the observing hooks). */
export interface RouteView {
  /** The provider row's name in holdfast.yaml. */
  readonly provider: string
  readonly model: string | null
  readonly role: string | null
  /** The plugin whose route decision this is, or null. */
  readonly plugin: string | null
}

/** What came back, for `onResponse`. `status` may be ≥ 400: a provider's error is an answer. */
export interface ResponseView {
  readonly status: number | null
  readonly outcome: string
  /** The step number (`001`…), or null for `count_tokens`. */
  readonly step: string | null
  readonly usage: {
    readonly input_tokens: number
    readonly output_tokens: number
    readonly cache_read_tokens: number
    readonly cache_write_tokens: number
  } | null
  readonly stopReason: string | null
}

/** One request as a plugin sees it. Frozen; `body` throws on any write. */
export interface Exchange {
  readonly id: string
  readonly dialect: DialectName
  readonly kind: 'step' | 'count_tokens'
  /** The path the client called, prefix removed, query kept (`/v1/messages?beta=true`). */
  readonly path: string
  /** As addressed in `identify`; as identified in every later hook. */
  readonly workspace: string
  readonly agent: string
  /** The same object as `summary.headers`. */
  readonly headers: Readonly<Record<string, string>>
  /** The client's body, parsed once by holdfast. Read it; never change it. */
  readonly body: DeepReadonly<JsonObject>
  readonly summary: ExchangeSummary
  /** null in `identify`. */
  readonly route: RouteView | null
  /** Set in `onResponse` only. */
  readonly response: ResponseView | null
  /** true under `holdfast replay` and `runPlugin`: nothing is sent. */
  readonly replay: boolean
}

/** `identify`'s answer: move the request to another workspace and/or agent, and/or mark it. */
export interface IdentifyDecision {
  workspace?: string
  agent?: string
  /** One sentence for meta.json and `holdfast replay`. */
  why?: string
  /**
   * The request is a compaction (the model is asked to summarise the conversation: `request`) or
   * the first after one (its transcript starts again from the summary: `after`); `via` says how the
   * plugin knew. Recorded in meta.json; `holdfast steps` and `why` name it.
   */
  compaction?: { kind: 'request' | 'after'; via: string }
}

/** `route`'s answer: any of a role (at the agent's followed config), a provider row, a model. */
export interface RouteDecision {
  role?: string
  provider?: string
  model?: string
  /** One sentence for `holdfast replay` and the log. */
  why?: string
}

/** What `onError` learns: holdfast's error code (docs/errors.md) and its sentence. */
export interface FailureView {
  readonly code: string
  readonly message: string
}

export interface Hooks {
  /** After accept. Fails closed: a throw answers 502 PLUGIN_FAILED naming the plugin. */
  identify?(ex: Exchange): Awaitable<IdentifyDecision | undefined | void>
  /** After resolve. Fails closed like `identify`. */
  route?(ex: Exchange): Awaitable<RouteDecision | undefined | void>
  /** After finish (the record is written). A throw is logged and ignored. */
  onResponse?(ex: Exchange): Awaitable<void>
  /** After any stage failed. A throw is logged and ignored. */
  onError?(ex: Exchange, err: FailureView): Awaitable<void>
  /** At shutdown, and when a reload replaces this instance. A throw is logged. */
  close?(): Awaitable<void>
}

/** The hook names, in lifecycle order; `setup` returning any other name is refused. */
export const HOOK_NAMES = ['identify', 'route', 'onResponse', 'onError', 'close'] as const

export interface PluginLog {
  debug(msg: string, fields?: Record<string, unknown>): void
  info(msg: string, fields?: Record<string, unknown>): void
  warn(msg: string, fields?: Record<string, unknown>): void
  error(msg: string, fields?: Record<string, unknown>): void
}

/** One recorded step as a plugin may read it. */
export interface RecordedStep {
  /** Its number (`007`). */
  readonly step: string
  /** Its request headers as meta.json recorded them (auth and secret-looking ones removed). */
  readonly headers: Readonly<Record<string, string>>
}

/** What a plugin may read of the records: read-only, and nothing of a request's body. */
export interface RecordsView {
  /**
   * The latest recorded step of an agent (pending or committed), or undefined when it has none
   * (or its workspace does not exist). Under `holdfast replay`, the records as they are now.
   */
  latestStep(workspace: string, agent: string): Promise<RecordedStep | undefined>
}

export interface PluginContext<O = Record<string, unknown>> {
  readonly name: string
  /** Validated against `optionsSchema`, its defaults filled in. */
  readonly options: O
  readonly log: PluginLog
  /** `<home>/plugins/<name>/`, created on first read. */
  readonly dataDir: string
  /** The records of this home, to read (e.g. which session an address already belongs to). */
  readonly records: RecordsView
}

export interface PluginDefinition<O = Record<string, unknown>> {
  /** Names the plugin in errors, logs, meta.json and its data directory: letters, digits, `.`, `_`, `-`. */
  name: string
  apiVersion: typeof apiVersion
  /** A JSON Schema (draft-07) for `options`, checked with ajv at start. */
  optionsSchema?: object
  setup(ctx: PluginContext<O>): Awaitable<Hooks | void>
}

/**
 * A typed identity: a plain object of the same shape is accepted too.
 * @example
 * export default definePlugin({ name: 'tiny', apiVersion: 1, setup: () => ({ route: () => undefined }) })
 */
export function definePlugin<O = Record<string, unknown>>(plugin: PluginDefinition<O>): PluginDefinition<O> {
  return plugin
}
