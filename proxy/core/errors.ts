/**
 * The table of local fault codes: each with the HTTP status it answers with and one sentence
 * of meaning. Invariant: a status is honest about whose fault it is: 400 only when changing
 * the request would fix it; internal failures are 5xx. `docs/errors.md` lists this table and a
 * test keeps the two equal. Upstream errors are not here: they pass through byte for byte.
 */

export const ERROR_CODES = {
  BAD_JSON: {
    status: 400,
    type: 'invalid_request_error',
    meaning:
      'The request body is not valid JSON, is nested deeper than 512 levels, or repeats a top-level key.',
  },
  BAD_FIELD: {
    status: 400,
    type: 'invalid_request_error',
    meaning:
      'A field of the request body that holdfast reads has the wrong type (the message names it, e.g. tools[2].name); nothing was written.',
  },
  BAD_NAME: {
    status: 400,
    type: 'invalid_request_error',
    meaning:
      'A workspace, agent or client name is not a usable path component and git ref component, is over 100 bytes of UTF-8, or is not UTF-8.',
  },
  BODY_TOO_LARGE: {
    status: 413,
    type: 'request_too_large',
    meaning: 'The request body is larger than the configured limit.',
  },
  ROLE_NOT_DECLARED: {
    status: 400,
    type: 'invalid_request_error',
    meaning: 'The request names a role the followed config does not declare.',
  },
  ROLE_ROW_MISSING: {
    status: 400,
    type: 'invalid_request_error',
    meaning: 'The role names a provider row that holdfast.yaml does not declare.',
  },
  ROLE_DIALECT_MISMATCH: {
    status: 400,
    type: 'invalid_request_error',
    meaning: 'The role routes to a provider row of another dialect than the endpoint.',
  },
  CONFIG_UNRESOLVED: {
    status: 409,
    type: 'invalid_request_error',
    meaning:
      'No governing config could be found for the agent (no config/* ancestor, or two incomparable ones).',
  },
  TOKEN_REQUIRED: {
    status: 401,
    type: 'authentication_error',
    meaning:
      "The request did not carry holdfast's token where it is required: on the admin surface and the MCP endpoint, and on every request when a token is configured.",
  },
  ROW_TOKEN_REQUIRED: {
    status: 403,
    type: 'permission_error',
    meaning:
      "The provider row adds the operator's key (api_key_env) and the request did not carry holdfast's token as its API key (x-api-key, Authorization: Bearer) or in x-holdfast-token.",
  },
  HOST_REFUSED: {
    status: 403,
    type: 'permission_error',
    meaning: 'The Host header is not a loopback name (DNS rebinding guard).',
  },
  ORIGIN_REFUSED: {
    status: 403,
    type: 'permission_error',
    meaning:
      'A request to a provider endpoint carried an Origin header (a web page) that holdfast.yaml browser_origins does not list.',
  },
  BAD_CONTENT_TYPE: {
    status: 415,
    type: 'invalid_request_error',
    meaning: 'A recorded endpoint was sent a body whose content-type is not application/json.',
  },
  UNSUPPORTED_ENCODING: {
    status: 415,
    type: 'invalid_request_error',
    meaning:
      'The request body has a content-encoding (gzip, deflate, br, …) on an endpoint holdfast reads: send it uncompressed.',
  },
  REQUEST_TIMEOUT: {
    status: 408,
    type: 'timeout_error',
    meaning: 'The request body (or its headers) stopped arriving for longer than the configured idle time.',
  },
  BODY_TOO_SLOW: {
    status: 408,
    type: 'timeout_error',
    meaning:
      'The request body arrived slower than the configured minimum rate (timeouts.request_body_min_bytes_per_s), however steadily it trickled.',
  },
  EXPECTATION_FAILED: {
    status: 417,
    type: 'invalid_request_error',
    meaning: 'The request carried an Expect header other than 100-continue.',
  },
  METHOD_NOT_ALLOWED: {
    status: 405,
    type: 'invalid_request_error',
    meaning:
      'The method is not served (CONNECT: holdfast is a base URL, not a forward proxy; the MCP endpoint serves GET, POST and DELETE).',
  },
  BAD_HTTP: {
    status: 400,
    type: 'invalid_request_error',
    meaning:
      "Node's HTTP parser refused the request (a malformed request line or header), or an HTTP/1.1 request carried no Host header.",
  },
  HEADERS_TOO_LARGE: {
    status: 431,
    type: 'request_too_large',
    meaning:
      "The request headers are over Node's limit (16 KB by default; the message names it). holdfast.yaml has no setting for it: start holdfast with `NODE_OPTIONS=--max-http-header-size=<bytes>` to raise it.",
  },
  ADMIN_REFUSED: {
    status: 403,
    type: 'permission_error',
    meaning: 'An admin request carried an Origin header or a non-JSON body.',
  },
  NOT_FOUND: { status: 404, type: 'not_found_error', meaning: 'No such endpoint.' },
  MCP_NO_SESSION: {
    status: 400,
    type: 'invalid_request_error',
    meaning:
      'A request to the MCP endpoint carried no mcp-session-id and is not an initialize request (the body is JSON-RPC, as MCP clients read it).',
  },
  MCP_SESSION_UNKNOWN: {
    status: 404,
    type: 'not_found_error',
    meaning: 'The mcp-session-id names no open session (it ended, or holdfast restarted): initialize again.',
  },
  MCP_SESSION_REFUSED: {
    status: 403,
    type: 'permission_error',
    meaning: 'The mcp-session-id names a session of another agent than the address.',
  },
  WEBSOCKET_UNSUPPORTED: {
    status: 426,
    type: 'invalid_request_error',
    meaning:
      'A WebSocket upgrade holdfast does not carry (not the Responses endpoint, a row with websocket: false, a provider refusing it); the client falls back to HTTP at once.',
  },
  SOCKET_ROW_CHANGED: {
    status: 400,
    type: 'invalid_request_error',
    meaning:
      "A WebSocket frame resolved to another provider row than its socket's (by its role or a plugin's route); it was not sent: send it over HTTP.",
  },
  VIEW_SIGN_IN: {
    status: 401,
    type: 'authentication_error',
    meaning:
      'A page of the web view was asked for without its cookie, a valid one-time ticket or the token: open it with holdfast open.',
  },
  VIEW_REFUSED: {
    status: 403,
    type: 'permission_error',
    meaning:
      'A web view request came from another origin, or a form carried no valid anti-forgery value; nothing was done.',
  },
  VIEW_FORM_INVALID: {
    status: 400,
    type: 'invalid_request_error',
    meaning: 'A Fork from here form named no role or no goal; nothing was fired.',
  },
  BAD_REQUEST: {
    status: 400,
    type: 'invalid_request_error',
    meaning: 'An admin request is missing a field or gives one of the wrong type.',
  },
  CLIENT_UNKNOWN: {
    status: 404,
    type: 'not_found_error',
    meaning: 'holdfast.yaml declares no client (tool host) of that name.',
  },
  LOAD_REFUSED: {
    status: 409,
    type: 'invalid_request_error',
    meaning:
      'A load or unload was refused whole (a tool not advertised or not loaded, a name not callable, a client not declared or not registered in the workspace); nothing was written.',
  },
  RECORD_WRITE_FAILED: {
    status: 500,
    type: 'api_error',
    meaning: "The step's record could not be written before sending; nothing was sent.",
  },
  NO_PROVIDER_ROW: {
    status: 500,
    type: 'api_error',
    meaning: 'holdfast.yaml declares no provider row for this dialect (the row named after it).',
  },
  PROVIDER_KEY_MISSING: {
    status: 500,
    type: 'api_error',
    meaning: 'The provider row names api_key_env and that variable is not set for holdfast.',
  },
  PLUGIN_FAILED: {
    status: 502,
    type: 'api_error',
    meaning: "A plugin's deciding hook threw; the request fails closed.",
  },
  UPSTREAM_UNREACHABLE: {
    status: 502,
    type: 'api_error',
    meaning: 'The provider could not be reached or did not answer in time.',
  },
  SHUTTING_DOWN: {
    status: 503,
    type: 'overloaded_error',
    meaning: 'holdfast is shutting down and takes no new steps.',
  },
  INTERNAL: { status: 500, type: 'api_error', meaning: 'An unexpected fault inside holdfast.' },
} as const satisfies Record<string, { status: number; type: string; meaning: string }>

export type ErrorCode = keyof typeof ERROR_CODES

/**
 * Codes a step's `meta.json` records in `error.code` (and plugins' `onError` receive) for what
 * happened after the answer began or instead of it. No client is ever answered with one of these:
 * the answer was the provider's, or the client was gone. Outcomes: docs/records.md.
 */
export const RECORDED_CODES = {
  CLIENT_GONE: 'The client went away before or during the answer; the provider call was aborted.',
  UPSTREAM_FAILED: "The provider's answer failed mid-stream; the client's connection was cut.",
  UPSTREAM_STREAM_ERROR:
    'A 200 event stream carried an error event: the step is recorded as an upstream error.',
  RESPONSE_UNDECODABLE: "The answer's content-encoding could not be decoded; its bytes are kept as sent.",
  INTERRUPTED: 'holdfast stopped before the step finished; recovered at the next start (its bytes kept).',
  NOT_SENT: 'holdfast stopped after recording the step and before sending it; the provider never saw it.',
  RECORD_DAMAGED:
    "The journal held part of the step's answer damaged: the answer is not committed, its bytes are kept under quarantine/.",
  SHUTDOWN_TIMEOUT:
    'holdfast stopped waiting for the step at shutdown (timeouts.shutdown_ms): the provider call was aborted and the step recorded as interrupted with the bytes received so far (not_sent when it had not gone out).',
} as const satisfies Record<string, string>

export type RecordedCode = keyof typeof RECORDED_CODES

/** A local fault with a code from the table; `message` is the one sentence the client reads. */
export class HoldfastError extends Error {
  readonly code: ErrorCode
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'HoldfastError'
    this.code = code
  }
  get status(): number {
    return ERROR_CODES[this.code].status
  }
}
