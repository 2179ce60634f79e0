/**
 * A keep-warm ping (proxy/live/keep-warm.ts), sent by the serve to itself: the agent's last
 * request as it went upstream (its bytes, with `max_tokens: 1` and `stream: false` spliced in),
 * on the agent's `.aux` sibling, with the version and cache-keying headers it was sent with and
 * the home's token, so the pipeline records it as a step with its cost, and `x-holdfast-keep-warm:
 * <NNN>` (recorded, never sent upstream) so the reports know it for a ping. Invariant: the prefix
 * bytes are the recorded ones (nothing re-serialized), and only a row that adds its own key
 * (`api_key_env`) is pinged: the client's key was never recorded.
 */
import { KEEP_WARM_HEADER } from '../core/headers'
import { REQUEST_FILE } from '../core/layout'
import { formatStep } from '../core/naming'
import { applyEdits, jsonBytes } from '../core/splice'
import { scanTopLevel } from '../core/json-scan'
import { readStepFile, readStepMeta } from '../record/read'
import type { ServerContext } from './context'
import { auxOf, type Warmable } from './keep-warm'

export function pingSender(
  ctx: ServerContext,
  url: string,
  token: string | undefined,
): (w: Warmable) => Promise<void> {
  const keyless = new Set<string>()
  return async (w) => {
    const ws = ctx.workspace(w.ws)
    const meta = await readStepMeta(ws, w.agent, w.n)
    const bytes = await readStepFile(ws, w.agent, w.n, REQUEST_FILE)
    if (!meta || !bytes || meta.websocket) return
    const row = ctx.config.providers[meta.route.provider]
    if (!row?.api_key_env) {
      if (!keyless.has(meta.route.provider))
        ctx.log.warn(
          { provider: meta.route.provider },
          `keep-warm: provider row "${meta.route.provider}" has no api_key_env, so holdfast holds no key to ping it with; its agents are not kept warm`,
        )
      keyless.add(meta.route.provider)
      return
    }
    const top = scanTopLevel(bytes)
    if (!top.ok) return
    const body = applyEdits(bytes, top, [
      { key: 'max_tokens', value: jsonBytes(1) },
      { key: 'stream', value: jsonBytes(false) },
    ])
    const headers: Record<string, string> = { 'content-type': 'application/json' }
    for (const [name, value] of Object.entries({ ...meta.request_headers, ...meta.cache_keying_headers }))
      if (/^anthropic-(version|beta)$/.test(name) && typeof value === 'string') headers[name] = value
    if (meta.route.role) headers['x-holdfast-role'] = meta.route.role
    headers[KEEP_WARM_HEADER] = formatStep(w.n)
    if (token) headers['x-holdfast-token'] = token
    const path = `/w/${encodeURIComponent(w.ws)}/a/${encodeURIComponent(auxOf(w.agent))}${meta.endpoint}`
    const res = await fetch(`${url}${path}`, { method: 'POST', headers, body })
    await res.arrayBuffer()
    if (!res.ok) throw new Error(`the ping was answered ${res.status}`)
  }
}
