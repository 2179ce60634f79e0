/* Generated from schemas/holdfast.schema.json by scripts/gen-types.js. Do not edit; run npm run gen:types. */

export type PluginEntry =
  | string
  | {
      path: string
      options?: {}
    }
  | {
      package: string
      options?: {}
    }

/**
 * <home>/holdfast.yaml: proxy settings, provider rows, tool clients, plugins.
 */
export interface HoldfastConfig {
  listen: {
    host: string
    port: number
  }
  defaults: {
    workspace: string
    agent: string
  }
  /**
   * When set (or HOLDFAST_TOKEN), every request must carry this token (x-holdfast-token, or as the API key); required to bind off loopback. Unset: serve makes <home>/token, which the admin surface, the MCP endpoint and api_key_env rows require.
   */
  token?: string
  /**
   * Origins (scheme://host[:port]) whose web pages may call the provider endpoints; any other request with an Origin header is refused (403).
   */
  browser_origins?: string[]
  limits?: {
    body_bytes?: number
    /**
     * Bytes of previous requests kept in memory for the hold, over all agents (least recently used dropped first; a dropped agent reads its record from disk).
     */
    previous_cache_bytes?: number
    /**
     * Bytes of each agent's last request (its bytes and parsed value) kept in memory so the next request is read from its new tail only, over all agents (least recently used dropped first; a request that finds none is read whole).
     */
    read_cache_bytes?: number
    /**
     * After this long with no request in flight, run one full garbage collection so the memory a burst of requests grew is given back (0 = never).
     */
    idle_collect_ms?: number
    /**
     * An agent with no step in flight or waiting for its commit for this long is forgotten by the running serve (its numbering, lock and kept previous request); its next step reads them from disk again.
     */
    agent_idle_ms?: number
  }
  timeouts?: {
    upstream_headers_ms?: number
    upstream_body_ms?: number
    tool_call_ms?: number
    /**
     * A request body that sends nothing for this long is answered 408.
     */
    request_body_idle_ms?: number
    /**
     * A request body may take request_body_idle_ms plus one second per this many bytes received; slower is answered 408 (BODY_TOO_SLOW). 0: no minimum pace.
     */
    request_body_min_bytes_per_s?: number
    /**
     * How long shutdown (SIGTERM, SIGINT) waits for in-flight steps before it aborts them; they are recorded as interrupted (SHUTDOWN_TIMEOUT).
     */
    shutdown_ms?: number
  }
  hold?: {
    ttl_ms?: number
    long_ttl_ms?: number
    /**
     * Keep an idle agent's cached prefix warm: after after_s idle, send its last request again with max_tokens 1, recorded on its .aux sibling, at most max_pings times per idle period; only for a prefix of at least min_tokens, on a row with api_key_env. Off unless set (docs/hold.md).
     */
    keep_warm?: {
      after_s?: number
      max_pings?: number
      min_tokens?: number
    }
  }
  maintenance?: {
    /**
     * Run git gc on a workspace repository after this many step commits (0 = never).
     */
    gc_every_steps?: number
  }
  /**
   * Provider rows by name; the row named after a dialect is that dialect's default.
   */
  providers: {
    [k: string]: ProviderRow
  }
  /**
   * USD per million tokens by model id, overriding the built-in table.
   */
  prices?: {
    [k: string]: Price
  }
  /**
   * Tool hosts (MCP servers) by name; a name is a path component. Registration in a workspace is written to <home>/clients/<client>/workspaces/<ws> at serve start.
   */
  clients?: {
    [k: string]: Client
  }
  /**
   * Plugins in run order: a built-in or package name, or {path|package, options}. Absent: the built-in claude-code plugin alone; [] turns it off.
   */
  plugins?: PluginEntry[]
  /**
   * Another program that takes holdfast's dispatch argv (e.g. litany); holdfast then only runs it and logs the row.
   */
  dispatcher?: {
    /**
     * @minItems 1
     */
    command: [string, ...string[]]
  }
  journal?: {
    /**
     * fsync the request record before sending and the response before its end is delivered (survives a power loss, costs a disk flush per step).
     */
    fsync?: boolean
    /**
     * Room the journal keeps in a reserve file per workspace (journal/reserve) for answers already under way when the disk fills: given back a piece at a time so their answer and its end still land in the journal, made whole again before the next step is recorded (a step is refused RECORD_WRITE_FAILED while it cannot be). 0: no reserve, and an answer the full disk refuses is kept only in memory until its commit lands.
     */
    reserve_bytes?: number
  }
  /**
   * This machine's name in a shared remote: its agents' branches are pushed as refs/holdfast/<machine>/agents/<agent>. One git ref component. Default: the host name's first label (characters a ref cannot hold become -).
   */
  machine?: string
  /**
   * Every step as an OpenTelemetry GenAI span, exported over OTLP/HTTP (docs/telemetry.md). The standard OTEL_EXPORTER_OTLP_* variables win over these keys; without an endpoint nothing of OpenTelemetry is loaded.
   */
  telemetry?: {
    /**
     * The OTLP/HTTP base URL (as OTEL_EXPORTER_OTLP_ENDPOINT: /v1/traces is appended unless it ends with it).
     */
    endpoint?: string
    /**
     * http/protobuf (the default) or http/json (as OTEL_EXPORTER_OTLP_PROTOCOL).
     */
    protocol?: 'http/protobuf' | 'http/json'
    /**
     * Headers sent with every export (an Authorization header, an API key); OTEL_EXPORTER_OTLP_HEADERS adds to them and wins.
     */
    headers?: {
      [k: string]: string
    }
    /**
     * Put the prompt and the answer (gen_ai.input.messages, gen_ai.output.messages, gen_ai.system_instructions) on each span. Off by default: they leave the machine.
     */
    capture_content?: boolean
    /**
     * Which GenAI semantic conventions the cache-write count follows: stable names gen_ai.usage.cache_creation.input_tokens (the default), latest gen_ai.usage.cache_write.input_tokens.
     */
    semconv?: 'stable' | 'latest'
  }
  /**
   * What a workspace does with the git remote named holdfast of its repository, when it has one (docs/remote.md).
   */
  remote?: {
    /**
     * Push agents' branches to the remote in the background (false: only pull config).
     */
    push?: boolean
    /**
     * Where agents' branches go on the remote: custom (refs/holdfast/<machine>/agents/<agent>), heads (refs/heads/holdfast/<machine>/agents/<agent>, for hosts that refuse other refs), auto (custom, then heads if the remote refuses it).
     */
    refs?: 'auto' | 'custom' | 'heads'
    /**
     * A push starts this long after the first commit it carries, so the commits that land meanwhile go in one push.
     */
    push_delay_ms?: number
    /**
     * The first retry after a push that could not reach the remote; each next one waits twice as long.
     */
    retry_min_ms?: number
    /**
     * The longest wait between retries.
     */
    retry_max_ms?: number
    /**
     * Pull config/* lineages from the remote this often, besides at start and on holdfast remote pull (0: not on a timer).
     */
    fetch_interval_s?: number
    /**
     * A git push or fetch (of teammates' agents) that shows no progress for this long is stopped (a push is retried); the config pull, small, is stopped after this long in all.
     */
    timeout_s?: number
  }
}
export interface ProviderRow {
  dialect: 'anthropic' | 'openai'
  /**
   * anthropic: without /v1 (https://api.anthropic.com); openai: with it (https://api.openai.com/v1).
   */
  base_url: string
  /**
   * The proxy sets the provider's auth header from this environment variable.
   */
  api_key_env?: string
  /**
   * openai: set prompt_cache_key to <ws>/<agent> when the client sent none.
   */
  prompt_cache_key?: 'agent'
  /**
   * anthropic: add diagnostics: {previous_message_id: <the agent's previous answer id>} to a request that carries none, so the provider says why a prefix missed (docs/hold.md). Off unless set.
   */
  diagnostics?: 'add'
  /**
   * openai: carry the Responses WebSocket (Codex's GET /v1/responses upgrade) over a socket of this row's own; false answers the upgrade 426, so the client falls back to HTTP at once.
   */
  websocket?: boolean
}
export interface Price {
  input: number
  output: number
  cache_write?: number
  cache_write_1h?: number
  cache_read?: number
}
export interface Client {
  mcp: McpStdio | McpHttp
  /**
   * Workspaces this client is registered in.
   */
  workspaces?: string[]
  /**
   * Deadline for one tools/list or tools/call (default 120000 for calls).
   */
  timeout_ms?: number
}
export interface McpStdio {
  command: string
  args?: string[]
  env?: {
    [k: string]: string
  }
  cwd?: string
}
export interface McpHttp {
  url: string
  headers?: {
    [k: string]: string
  }
}
