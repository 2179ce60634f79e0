/**
 * Request headers as holdfast keeps them: in meta.json, in logs and in the plugin's view of an
 * exchange. Invariant: no auth or secret-looking header and no `x-holdfast-*` header survives;
 * repeated values are joined with ", ". No headers: an empty object.
 */
import type { IncomingHttpHeaders } from 'node:http'

const SECRET_HEADER = /auth|key|token|secret|cookie|password|credential/i

/** Request headers as recorded: no auth or secret-looking header, no x-holdfast-*. */
export function sanitizeHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || name.startsWith('x-holdfast-') || SECRET_HEADER.test(name)) continue
    out[name] = Array.isArray(value) ? value.join(', ') : value
  }
  return out
}
