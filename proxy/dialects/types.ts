/**
 * What the proxy needs to know about a wire format (a dialect): the facets the hold compares,
 * how a loaded tool is presented, how tools are named, and the error envelope.
 * Invariant: everything here is pure and works on an already-parsed body; no module re-parses.
 */
import type { Json, JsonObject } from '../core/json'
import type { LoadedEntry } from '../core/loaded-set'

export type DialectName = 'anthropic' | 'openai'

/** The parts of a request that key the provider's prompt cache, in cache order. */
export interface Facets {
  /** `model` as sent (undefined when absent). */
  model: Json | undefined
  /**
   * anthropic: `system` normalized to blocks (a string is one text block; absent → undefined).
   * openai: the leading messages whose role is `system` or `developer` (an array, possibly empty).
   */
  system: Json | undefined
  /**
   * The content of the first message after the system part, as blocks (a string content is one
   * `{type: "text", text}` block); undefined when there is no such message.
   */
  head: Json[] | undefined
  /** The `tools` array as sent; undefined when absent. */
  tools: Json[] | undefined
  /**
   * The other fields that key the cache, by name (absent fields are undefined):
   * anthropic `tool_choice`, `thinking`, and the `anthropic-beta` header (as `header:anthropic-beta`);
   * openai `tool_choice`, `parallel_tool_calls`.
   */
  keying: Record<string, Json | undefined>
}

export interface Dialect {
  readonly name: DialectName
  /** The facets of a parsed body; `headers` are the request headers (lower-case names). */
  facets(body: JsonObject, headers: Readonly<Record<string, string | undefined>>): Facets
  /**
   * The first field of a request body whose type the proxy cannot read (compose, the hold, the
   * record, a later step), as one sentence naming it (`tools[2].name must be a string`); undefined
   * when every field it reads has its type. Fields it does not read are never checked.
   */
  checkShape(body: JsonObject): string | undefined
  /** A loaded tool in this dialect's tool format, under its presented name. */
  presentTool(entry: LoadedEntry): JsonObject
  /** The name a tool element declares (anthropic `name`; openai `function.name` or `name`), if any. */
  toolName(tool: Json): string | undefined
  /**
   * The tool names the transcript calls (anthropic `tool_use` blocks, openai assistant
   * `tool_calls[].function.name`), in first-seen order, without duplicates.
   */
  calledToolNames(body: JsonObject): string[]
  /** A tool declared only to close the history: `description` as given, schema `{"type":"object"}`. */
  closureTool(name: string, description: string): JsonObject
  /**
   * Number of cache breakpoints (`cache_control` markers) the body carries: top-level, tools,
   * system blocks, message content blocks. openai has none: 0.
   */
  breakpoints(body: JsonObject): number
  /** The dialect's own error envelope as bytes. `type` e.g. `invalid_request_error`, `api_error`. */
  errorBody(type: string, message: string): Buffer
  /** The field the dialect reads its output-token limit from (`max_tokens` / `max_completion_tokens`). */
  readonly maxTokensField: string
}
