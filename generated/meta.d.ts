/* Generated from schemas/meta.schema.json by scripts/gen-types.js. Do not edit; run npm run gen:types. */

/**
 * steps/<agent>/<NNN>/meta.json: what holdfast knew about one step. The send half is written with request.json before sending; the finish half after the response.
 */
export interface StepMeta {
  version: 1
  workspace: string
  agent: string
  step: string
  dialect: 'anthropic' | 'openai' | 'responses'
  /**
   * The path the client called, prefix removed, query kept.
   */
  endpoint: string
  /**
   * ISO time the record was written, just before sending.
   */
  started_at: string
  route: Route
  /**
   * Set when a plugin's identify moved the request: which plugin, from which addressed workspace and agent, and why.
   */
  identified?: {
    plugin: string
    from_workspace: string
    from_agent: string
    why?: string
  }
  /**
   * Set when a plugin (the built-in claude-code) marked the step as a compaction request (the model is asked to summarise the conversation) or as the first step after one; via says how it knew (a header, or the request's shape).
   */
  compaction?: {
    kind: 'request' | 'after'
    via: string
  }
  /**
   * The request's prompt cache key as sent (openai and responses prompt_cache_key: Codex sends its session id), when it has one.
   */
  prompt_cache_key?: string
  /**
   * The client's request headers, sanitized: no auth header, no x-holdfast-* (but x-holdfast-keep-warm on holdfast's own keep-warm ping: the step it keeps warm).
   */
  request_headers: {
    [k: string]: string
  }
  /**
   * Headers that key the provider's cache (anthropic-beta), compared by the hold.
   */
  cache_keying_headers: {
    [k: string]: string
  }
  hold: HoldVerdict
  /**
   * Presented names of loaded tools composed into the request.
   */
  injected_tools: string[]
  /**
   * Loaded tools the client already declared as its own MCP tools (Claude Code: mcp__<server>__<presented name>), so compose did not inject them; absent when none.
   */
  harness_tools?: string[]
  /**
   * Every field the proxy changed, and why.
   */
  changes: Change[]
  request_bytes: number
  websocket?: Websocket
  ended_at?: string
  ttfb_ms?: number | null
  total_ms?: number
  /**
   * The provider's HTTP status, or null when none arrived.
   */
  status?: number | null
  outcome?: 'ok' | 'upstream_error' | 'unreachable' | 'aborted' | 'interrupted' | 'not_sent'
  response_file?: string | null
  response_headers?: {
    [k: string]: string
  }
  /**
   * Set when the hold sent another tools array than the client's: the tools the client sent, by name, in its order (the client's side of a held step).
   */
  client_tools?: string[]
  /**
   * The provider's id of its answer (anthropic msg_…, responses resp_…): what a request continuing this step names as its diagnostics id. Null when the answer named none.
   */
  answer_id?: string | null
  /**
   * The model the answer says served the step (its model field, verbatim), beside route.model, the model asked for. Null when the answer named none.
   */
  served_model?: string | null
  provider_cache?: ProviderCache
  usage?: Usage | null
  cost?: Cost | null
  stop_reason?: string | null
  error?: null | {
    code: string
    message: string
  }
}
export interface Route {
  /**
   * The provider row's name.
   */
  provider: string
  url: string
  model: string | null
  role?: string | null
  config_commit?: string | null
  config_note?: string | null
  plugin?: string | null
}
export interface HoldVerdict {
  applied: boolean
  reason: string
  detail?: string
  /**
   * Names of the tools sent that the client had dropped.
   */
  held: string[]
  /**
   * Present (true) when the hold applied and the client had sent the kept tools in another order.
   */
  reordered?: true
}
export interface Change {
  field: string
  why: string
}
/**
 * Set when the step is a frame of a Responses WebSocket (docs/records.md): request.json is then the whole conversation the frame continues, and the frame file the exact bytes sent upstream.
 */
export interface Websocket {
  /**
   * create: a response.create frame; prewarm: one with generate false (on the agent's .aux sibling); other: any other frame passed as it came (binary, not JSON, or of another type; on .aux).
   */
  kind: 'create' | 'prewarm' | 'other'
  /**
   * The frame's `type` when it is a JSON object that names one.
   */
  type?: string
  /**
   * Present (true) for a binary frame.
   */
  binary?: true
  /**
   * The step's file holding the frame exactly as sent upstream: frame.json, or request.json itself for a frame that is no response.create.
   */
  frame_file: string
  frame_bytes: number
  /**
   * The response the frame continues (its previous_response_id), whose conversation request.json carries before the frame's own input.
   */
  previous_response_id?: string
  /**
   * Input items the frame itself carried (the rest of request.json's input came from the socket's earlier steps).
   */
  frame_items?: number
  /**
   * The client socket's number in this serve: the steps of one socket share it.
   */
  socket?: number
}
/**
 * What the provider said about its prompt cache on this step (anthropic diagnostics.cache_miss_reason, responses prompt_cache_diagnostics). The send half says whether the request asked and with which id; the finish adds what the answer said.
 */
export interface ProviderCache {
  /**
   * The request asked for the comparison (it carried diagnostics, or prompt_cache_options.comparison_response_id).
   */
  asked: boolean
  /**
   * The id of the earlier answer the request named (null: it opted in with none).
   */
  compared_with: string | null
  /**
   * reason: the provider named one (reason, verbatim); no_miss: it compared and found no divergence (anthropic diagnostics null, responses cache_hit); pending: its comparison had not finished (anthropic cache_miss_reason null); nothing: the answer carried no verdict.
   */
  said?: 'reason' | 'no_miss' | 'pending' | 'nothing'
  /**
   * The provider's word, verbatim: anthropic cache_miss_reason.type (system_changed, tools_changed, …), responses the reason of a cache_miss or the type of its other verdicts.
   */
  reason?: string | null
  /**
   * The provider's estimate of the input tokens past the divergence (anthropic cache_missed_input_tokens, responses cache_missed_tokens).
   */
  missed_input_tokens?: number | null
  /**
   * The provider's verdict as the answer carried it, verbatim (anthropic diagnostics, responses prompt_cache_diagnostics); absent when it carried none.
   */
  raw?: {
    [k: string]: unknown
  } | null
}
export interface Usage {
  /**
   * Uncached input tokens.
   */
  input_tokens: number
  output_tokens: number
  cache_read_tokens: number
  cache_write_tokens: number
  /**
   * Of the cache writes, those with the 5 minute lifetime (anthropic usage.cache_creation), when reported.
   */
  cache_write_5m_tokens?: number
  /**
   * Of the cache writes, those with the 1 hour lifetime (anthropic usage.cache_creation), when reported.
   */
  cache_write_1h_tokens?: number
  /**
   * The provider's per-iteration usage (anthropic usage.iterations: a server-side fallback's declined and serving models, a tool loop's turns, a compaction), when reported; the step is priced from their sum.
   */
  iterations?: Iteration[]
}
export interface Iteration {
  /**
   * message, fallback_message, compaction, … verbatim.
   */
  type: string
  model: string | null
  input_tokens: number
  output_tokens: number
  cache_read_tokens: number
  cache_write_tokens: number
}
export interface Cost {
  usd: number
  /**
   * Estimated input cost the hold saved (cache reads that would have been writes).
   */
  saved_by_hold_usd: number
  /**
   * What the price was matched to: the holdfast.yaml prices key, or the price library's provider/model id.
   */
  priced_as: string
  /**
   * The table the price came from: holdfast.yaml, or the price library with its version (genai-prices@0.1.8).
   */
  price_source?: string
}
