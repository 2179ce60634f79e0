/**
 * Request headers as holdfast keeps them: in meta.json, in logs and in the plugin's view of an
 * exchange. Invariant: no auth or secret-looking header and no `x-holdfast-*` header survives;
 * repeated values are joined with ", ". No headers: an empty object.
 */
import type { IncomingHttpHeaders } from 'node:http'

const SECRET_HEADER = /auth|key|token|secret|cookie|password|credential/i

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

/** Request headers as recorded: no auth or secret-looking header, no x-holdfast-*. */
export function sanitizeHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || name.startsWith('x-holdfast-') || SECRET_HEADER.test(name)) continue
    out[name] = Array.isArray(value) ? value.join(', ') : value
  }
  return out
}
