/* Generated from schemas/holdfast.schema.json by scripts/gen-types.js. Do not edit; run npm run gen:types. */

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
   * When set (or HOLDFAST_TOKEN), every request must carry x-holdfast-token with this value.
   */
  token?: string
  limits?: {
    body_bytes?: number
  }
  timeouts?: {
    upstream_headers_ms?: number
    upstream_body_ms?: number
    tool_call_ms?: number
  }
  hold?: {
    ttl_ms?: number
    long_ttl_ms?: number
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
}
export interface Price {
  input: number
  output: number
  cache_write?: number
  cache_write_1h?: number
  cache_read?: number
}
