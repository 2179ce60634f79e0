/**
 * The token rules (DESIGN §4, fourth round): which requests must carry holdfast's token and where
 * they may carry it. Pure: no sockets, no files.
 *
 * A request carries the token when `x-holdfast-token`, `x-api-key` or `Authorization: Bearer` holds
 * it (the last two: the way gateways' virtual keys work, so an SDK's own key setting is enough).
 * It must carry it on the admin surface and the MCP endpoint; through a provider row that adds the
 * operator's key (`api_key_env`); and everywhere when the token is configured (`strict`), but for
 * a listed origin's CORS preflight (a browser sends no custom header there).
 * Invariant: comparisons take the same time whatever the guess; a header that carries the token
 * as a key (`tokenKeyHeaders`) is removed before anything is forwarded or recorded (server.ts).
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'
import { HoldfastError } from '../core/errors'

export interface TokenRule {
  /** The home's token: the configured one, else `<home>/token`'s. */
  token: string
  /** True when the token is configured (`token` in holdfast.yaml or `HOLDFAST_TOKEN`): every request carries it. */
  strict: boolean
}

/** The auth headers a client's SDK sets its API key in; holdfast accepts its token there too. */
const KEY_HEADERS = ['x-api-key', 'authorization'] as const

const digest = (s: string): Buffer => createHash('sha256').update(s).digest()

/** The token's own digest, made once (a serve has one token). */
let wanted: { token: string; digest: Buffer } | undefined

/** Constant-time equality (both sides hashed first: a length says nothing either). */
function same(given: string, want: string): boolean {
  if (wanted?.token !== want) wanted = { token: want, digest: digest(want) }
  return timingSafeEqual(digest(given), wanted.digest)
}

const first = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v)

/** The credential a header value carries: the value itself, or what follows `Bearer ` in Authorization. */
function credential(name: (typeof KEY_HEADERS)[number], value: string): string | undefined {
  if (name === 'x-api-key') return value.trim()
  const m = /^bearer[ \t]+(\S+)[ \t]*$/i.exec(value)
  return m?.[1]
}

/** The key headers (`x-api-key`, `authorization`) whose value is the token. */
export function tokenKeyHeaders(token: string, headers: IncomingHttpHeaders): string[] {
  return KEY_HEADERS.filter((name) => {
    const value = first(headers[name])
    const given = value === undefined ? undefined : credential(name, value)
    return given !== undefined && same(given, token)
  })
}

/** Whether `x-holdfast-token` holds the token. */
export function headerCarriesToken(token: string, headers: IncomingHttpHeaders): boolean {
  const own = first(headers['x-holdfast-token'])
  return own !== undefined && same(own, token)
}

/** Whether the request carries the token: in x-holdfast-token, or as its API key. */
export function carriesToken(token: string, headers: IncomingHttpHeaders): boolean {
  return headerCarriesToken(token, headers) || tokenKeyHeaders(token, headers).length > 0
}

/**
 * The sentence that tells a refused client where the token goes. It does not spell the key
 * header's name: Claude Code shows its own "Invalid API key" instead of a 401 message that does.
 */
const WHERE =
  "send it in x-holdfast-token, or as the client's API key (ANTHROPIC_API_KEY or OPENAI_API_KEY, an SDK's apiKey, Authorization: Bearer); `holdfast env` exports it"

/** Where the token of this rule is kept, for a refusal's sentence. */
const kept = (rule: TokenRule): string =>
  rule.strict ? 'the token configured in holdfast.yaml or HOLDFAST_TOKEN' : "holdfast's token (<home>/token)"

/** A request that must carry the token (`what` names it: "the admin surface", "this holdfast"). */
export function requireToken(rule: TokenRule, headers: IncomingHttpHeaders, what: string): void {
  if (carriesToken(rule.token, headers)) return
  throw new HoldfastError('TOKEN_REQUIRED', `${what} requires ${kept(rule)}: ${WHERE}`)
}

/**
 * A provider row that adds the operator's key serves only requests that carried the token.
 * `carried` is what the server found before it removed the token from the key headers. A 403, not
 * a 401: the client may well hold a key of its own, it is not allowed this row's; and Claude Code
 * retries a 401 with backoff for minutes before its user sees why, a 403 it shows at once.
 */
export function requireRowToken(carried: boolean, rowName: string, row: { api_key_env?: string }): void {
  if (!row.api_key_env || carried) return
  throw new HoldfastError(
    'ROW_TOKEN_REQUIRED',
    `provider row "${rowName}" adds the operator's key ($${row.api_key_env}), so it serves only requests that carry holdfast's token (<home>/token): ${WHERE}`,
  )
}
