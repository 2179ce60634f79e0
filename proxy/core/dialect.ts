/**
 * What the proxy knows about a wire format (a dialect), all of it behind this one interface: its
 * endpoint and the provider paths it passes through, the request fields it reads and their types,
 * the parts that key the provider's cache, its tool format, its answer (usage, stop reason, the
 * assistant turn), an attempt's first request, its error envelope, and the provider rows it is
 * sent to (upstream path, auth header).
 * Invariant: everything here is pure and works on already-parsed or already-decoded values; no
 * module outside `dialects/` compares a dialect's name.
 */
import type { Json, JsonObject } from './json'
import type { ProviderRow } from '../../generated/holdfast'
import type { StepMeta, Usage } from '../../generated/meta'

/** A dialect's name: the names meta.json may record (schemas/meta.schema.json `dialect`). */
export type DialectName = StepMeta['dialect']

/** The parts of a request that key the provider's prompt cache, in cache order. */
export interface Facets {
  /** `model` as sent (undefined when absent). */
  model: Json | undefined
  /**
   * The system part, normalized: anthropic `system` as blocks (a string is one text block; absent →
   * undefined); openai the leading `system`/`developer` messages (an array, possibly empty);
   * responses `{instructions, input}`: `instructions` as parts (null when absent) and the leading
   * `system`/`developer` input items as the cache sees them.
   */
  system: Json | undefined
  /**
   * The content of the first message (input item) after the system part, as blocks (a string
   * content is one `{type: "text", text}` block); undefined when there is no such message.
   */
  head: Json[] | undefined
  /** The `tools` array as sent; undefined when absent. */
  tools: Json[] | undefined
  /** The other fields (and `header:<name>` headers) that key the cache, by name; absent ones undefined. */
  keying: Record<string, Json | undefined>
}

/** A tool as holdfast presents it (a loaded tool, the `clients` tool, a history-closure declaration). */
export interface ToolDef {
  name: string
  description: string
  input_schema: Json
}

/**
 * What a provider's answer says about its own prompt cache (anthropic `diagnostics`, responses
 * `prompt_cache_diagnostics`), read as the provider wrote it: `raw` is its object verbatim.
 */
export interface CacheWord {
  /** reason: it named one; no_miss: it compared and found none; pending: its comparison had not finished. */
  said: 'reason' | 'no_miss' | 'pending'
  /** The provider's own word (anthropic `type`, responses `reason`, or the type of its other verdicts). */
  reason: string | null
  missedInputTokens: number | null
  raw: JsonObject | null
}

/** What a provider's answer says about tokens and why it stopped. */
export interface AnswerFacts {
  usage: Usage | null
  stopReason: string | null
  /** An error event inside a 200 stream: the answer failed though its status said ok. */
  streamError: { type: string; message: string } | null
  /** The answer's own id (anthropic `msg_…`, responses `resp_…`), when it names one. */
  id?: string | null
  /** The model the answer says served it, verbatim, when it names one. */
  model?: string | null
  /** The provider's word on its cache; undefined when the answer carries none. */
  word?: CacheWord
}

/**
 * The request field a dialect names an earlier answer in, so that the provider compares its cache
 * with that answer's request (anthropic `diagnostics.previous_message_id`, responses
 * `prompt_cache_options.comparison_response_id`). Values are top-level fields, to be spliced.
 */
export interface CacheComparison {
  /** Whether a request asks for the comparison, and the answer it names (null: none). */
  of(body: JsonObject): { asked: boolean; comparedWith: string | null }
  /**
   * The request's field naming `id` instead (undefined `id`: naming none), for a request composed
   * from a recorded one; undefined when the request does not ask (nothing to rewrite).
   */
  naming(body: JsonObject, id: string | undefined): { key: string; value: Json } | undefined
  /**
   * The field that asks for the comparison with `id` (null: opt in with none), for a request that
   * does not ask; undefined when the dialect cannot ask so (responses has no opt-in without an id).
   */
  asking(body: JsonObject, id: string | null): { key: string; value: Json } | undefined
}

/** The assistant turn of a recorded answer, and the tool calls it made. */
export interface Rebuilt {
  /** The turn as the next request's transcript carries it (one message, or responses' output items). */
  turn: Json[]
  /** The answer's text, its text parts joined (`holdfast cohort` shows it). */
  text: string
  toolCalls: { id: string; name: string }[]
}

/** An attempt's first request (DESIGN §9): the notch's request continued, or a clean start. */
export interface FirstRequestInput {
  /** Absent for a clean start. */
  notch?: { request: JsonObject; reply: Rebuilt | undefined }
  /** The user turn's text: the pinned skills, then the goal, verbatim. */
  text: string
  /** The role's model (the proxy routes by x-holdfast-role; this decides whether thinking survives). */
  roleModel: string
  roleMaxTokens?: number
}

/** The provider rows of one API family (`dialect:` of a row in holdfast.yaml). */
export interface RowFamily {
  /** What a provider row's `dialect:` may say (schemas/holdfast.schema.json). */
  readonly name: ProviderRow['dialect']
  /** The provider URL for an incoming `/v1/...` path, query kept (openai base URLs carry `/v1`). */
  upstreamUrl(baseUrl: string, incoming: string): URL
  /** The auth header a row's own key is sent in. */
  authHeaders(key: string): Record<string, string>
  /** This family's provider id in the price library (`@pydantic/genai-prices`). */
  readonly priceProvider: string
}

/**
 * The provider paths a dialect answers on besides its endpoints, passed through unrecorded to its
 * rows. Paths several dialects declare are shared: a dialect whose `claims` match takes the
 * request, else the one that claims nothing.
 */
export interface PassThroughPaths {
  /** Prefixes ending in `/` (`/v1/`): every path under one is a provider path. */
  readonly under: readonly string[]
  /** Exact paths a client probes for connectivity (`/api/hello`): passed through on HEAD only. */
  readonly probes: readonly string[]
  /** What makes a shared path this dialect's: a request header it carries, or a path prefix (whole segments). */
  readonly claims?: { readonly headers: readonly string[]; readonly prefixes: readonly string[] }
}

/**
 * A conversation as a WebSocket carries it: every input item so far (the earlier frames' input and
 * the provider's output items, in order), each with its bytes, and the tools last declared.
 */
export interface SocketConversation {
  readonly items: readonly Json[]
  readonly itemBytes: readonly Buffer[]
  readonly tools: Json | undefined
}

/** What one event of a socket's answer is to the step it answers (the rest only pass). */
export type SocketEvent =
  | { kind: 'started'; id: string | undefined }
  | { kind: 'item'; item: Json; at: number | undefined }
  /** The answer is whole: `id` and `output` are the provider's; `kept` when a later frame may continue it. */
  | { kind: 'ended'; id: string | undefined; output: Json[] | undefined; kept: boolean; status: number }
  | { kind: 'other' }

/**
 * A dialect's WebSocket frames (the Responses WebSocket): what a client frame is, the whole
 * request a frame continuing a conversation stands for, what an answer's events say, and its
 * in-band errors. Pure.
 */
export interface SocketFrames {
  /** A parsed client frame: a step (`create`), a pre-warm (`prewarm`), a frame passed unrecorded, or another. */
  kindOf(frame: JsonObject): 'create' | 'prewarm' | 'processed' | 'other'
  /** The response a frame continues, if it names one. */
  continues(frame: JsonObject): string | undefined
  /**
   * The whole request a create frame stands for: the conversation it continues (none: the frame
   * starts one), then its own input, as one request of the dialect's endpoint would carry it.
   */
  wholeRequest(
    frame: Buffer,
    parsed: JsonObject,
    base: SocketConversation | undefined,
  ): { bytes: Buffer; parsed: JsonObject; conversation: SocketConversation; frameItems: number }
  /** `conversation` continued by an answer's output items. */
  continued(conversation: SocketConversation, output: readonly Json[]): SocketConversation
  /** The event's type, read cheaply (undefined: not a JSON object naming one). */
  eventType(event: Buffer): string | undefined
  /** What an event of `type` means to its step; `parse` reads it whole (only when it matters). */
  eventOf(type: string | undefined, parse: () => JsonObject | undefined): SocketEvent
  /** The provider's in-band answer to a continuation of a response the socket does not hold. */
  notFound(id: string): Buffer
  /** holdfast's own refusal in band: the provider's error event shape, with holdfast's code. */
  inBandError(status: number, type: string, code: string, message: string): Buffer
}

export interface Dialect {
  readonly name: DialectName
  /** The recorded endpoint (`/v1/messages`). */
  readonly endpoint: string
  /** An unrecorded endpoint that gets compose and the hold (anthropic `count_tokens`), if any. */
  readonly countTokensEndpoint?: string
  /** The other provider paths it passes through (none: only its endpoints are its paths). */
  readonly passThrough?: PassThroughPaths
  /** The provider rows this dialect is sent to; the row named after the family is its default. */
  readonly rows: RowFamily
  /** Headers holdfast adds when it makes a request of this dialect itself (dispatch). */
  readonly requiredHeaders: Readonly<Record<string, string>>

  /**
   * The first field of a request body whose type the proxy cannot read (compose, the hold, the
   * record, a later step), as one sentence naming it (`tools[2].name must be a string`); undefined
   * when every field it reads has its type. Fields it does not read are never checked.
   */
  checkShape(body: JsonObject): string | undefined
  /** The facets of a parsed body; `headers` are the request headers (lower-case names). */
  facets(body: JsonObject, headers: Readonly<Record<string, string | undefined>>): Facets
  /** The request headers that key the cache, as recorded in meta.json and compared by the hold. */
  keyingHeaders(headers: Readonly<Record<string, string | string[] | undefined>>): Record<string, string>
  /**
   * The top-level field the transcript lives in (`messages`, `input`): `why` names the first
   * difference by its path there.
   */
  readonly transcriptField: string
  /** Every transcript entry (messages, or input items), system ones included (plugin summaries). */
  messages(body: JsonObject): Json[]
  /**
   * The transcript after the system part, as the cache sees it (`why`): the last entries of
   * `messages(body)`, so an entry's index there is its index in `transcriptField`.
   */
  transcript(body: JsonObject): Json[]
  /** The text of the system part (plugin summaries). */
  systemText(body: JsonObject): string
  /** The text of one transcript entry's content (plugin summaries), or '' when it has none. */
  textOf(entry: Json): string
  /** The role of a transcript entry (`user`, `assistant`, …), if it has one. */
  roleOf(entry: Json): string | undefined
  /** A tool in this dialect's tool format. */
  tool(def: ToolDef): JsonObject
  /** The name a tool element declares (anthropic and responses `name`; openai `function.name` or `name`), if any. */
  toolName(tool: Json): string | undefined
  /** The tool names the transcript calls, in first-seen order, without duplicates. */
  calledToolNames(body: JsonObject): string[]
  /** Cache breakpoints (`cache_control` markers) the body carries; 0 where caching is automatic. */
  breakpoints(body: JsonObject): number
  /** The field the dialect reads its output-token limit from (`max_tokens`, `max_completion_tokens`, …). */
  readonly maxTokensField: string
  /** The output-token limit the client set, in whichever field the dialect accepts it. */
  clientMaxTokens(body: JsonObject): Json | undefined
  /** The field a provider row's per-agent prompt cache key goes in, when the dialect has one. */
  readonly promptCacheKeyField?: string

  /** Where a request asks the provider to compare its cache with an earlier answer, if the dialect can. */
  readonly cacheComparison?: CacheComparison
  /** Usage, stop reason and a stream's error event, from a decoded answer (`sse`: an event stream). */
  answerFacts(body: Buffer, sse: boolean): AnswerFacts
  /** The assistant turn of a recorded answer; undefined when it has none (an error, an empty stream). */
  rebuildReply(response: Buffer, sse: boolean): Rebuilt | undefined
  /** An attempt's first request in this dialect. */
  firstRequest(input: FirstRequestInput): JsonObject

  /** The dialect's own error envelope as bytes. `type` e.g. `invalid_request_error`, `api_error`. */
  errorBody(type: string, message: string): Buffer
  /** Its WebSocket frames, when its endpoint can be upgraded to one (responses). */
  readonly socket?: SocketFrames
}
