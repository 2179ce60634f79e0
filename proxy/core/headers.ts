/**
 * Request headers as holdfast keeps them: in meta.json, in logs and in the plugin's view of an
 * exchange. Invariant: no auth or secret-looking header and no `x-holdfast-*` header survives (but
 * `x-holdfast-keep-warm`, which holdfast's own keep-warm ping sets to say what it is), nor the
 * repository URLs in Codex's turn metadata; repeated values are joined with ", ". No headers: an
 * empty object. (What goes upstream carries no `x-holdfast-*` header at all: http/upstream.)
 */
import type { IncomingHttpHeaders } from 'node:http'

const SECRET_HEADER = /auth|key|token|secret|cookie|password|credential/i

/** On a keep-warm ping (live/keep-warm-ping): the step of the agent it keeps warm (`003`); recorded. */
export const KEEP_WARM_HEADER = 'x-holdfast-keep-warm'

/** Query parameter names that carry credentials (`?key=`, `?api_key=`, `?access_token=`, `?sig=`, …). */
const SECRET_PARAM =
  /^(x-)?(key|api[-_]?key|apikey|token|access[-_]?token|refresh[-_]?token|id[-_]?token|auth|authorization|sig|signature|secret|client[-_]?secret|password|passwd|pwd|session|code)$/i

/**
 * A path or URL as records and logs keep it: the value of every credential-carrying query
 * parameter replaced by `REDACTED`; everything else byte for byte. (The provider still receives
 * the original.)
 */
export function redactQuery(url: string): string {
  const q = url.indexOf('?')
  if (q === -1) return url
  const hash = url.indexOf('#', q)
  const query = url.slice(q + 1, hash === -1 ? undefined : hash)
  const redacted = query
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=')
      const rawName = eq === -1 ? pair : pair.slice(0, eq)
      let name = rawName
      try {
        name = decodeURIComponent(rawName.replace(/\+/g, ' '))
      } catch {
        // an undecodable name is judged as written
      }
      return eq !== -1 && SECRET_PARAM.test(name) ? `${rawName}=REDACTED` : pair
    })
    .join('&')
  return url.slice(0, q + 1) + redacted + (hash === -1 ? '' : url.slice(hash))
}

/**
 * Codex's `x-codex-turn-metadata` (a JSON object: session, thread and turn ids, the sandbox, and per
 * workspace the git remotes it found) without `associated_remote_urls`: a repository URL can name a
 * private repository or carry a credential, and a record may leave the machine (a remote). Anything
 * that is not such an object is dropped whole.
 */
export function codexTurnMetadata(value: string): string | undefined {
  let v: unknown
  try {
    v = JSON.parse(value)
  } catch {
    return undefined
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return undefined
  const workspaces = (v as { workspaces?: unknown }).workspaces
  if (workspaces !== null && typeof workspaces === 'object' && !Array.isArray(workspaces)) {
    for (const w of Object.values(workspaces as Record<string, unknown>)) {
      if (w !== null && typeof w === 'object') delete (w as Record<string, unknown>).associated_remote_urls
    }
  }
  return JSON.stringify(v)
}

/** Headers kept in part: the part that is not a secret or a remote's address. */
const REDUCED: Readonly<Record<string, (value: string) => string | undefined>> = {
  'x-codex-turn-metadata': codexTurnMetadata,
}

/** Request headers as recorded: no auth or secret-looking header, no x-holdfast-* (but the ping's), no repository URL. */
export function sanitizeHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || SECRET_HEADER.test(name)) continue
    if (name.startsWith('x-holdfast-') && name !== KEEP_WARM_HEADER) continue
    const joined = Array.isArray(value) ? value.join(', ') : value
    const reduce = REDUCED[name]
    const kept = reduce ? reduce(joined) : joined
    if (kept !== undefined) out[name] = kept
  }
  return out
}
