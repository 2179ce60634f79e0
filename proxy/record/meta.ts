/**
 * meta.json, built in two halves (docs/records.md): the send half, written with request.json before
 * the send (who, where, route, sanitized headers, what the proxy changed, the hold verdict, whether
 * the request asks the provider for its cache verdict), and the answer's half as far as the forward
 * knows it (times, status, outcome, headers); the finish adds what the answer's body says (usage,
 * cost, stop reason, its id, the model that served, the provider's cache verdict). Pure. Invariant: no auth header,
 * `set-cookie` or credential query parameter reaches a meta.
 */
import { redactQuery } from '../core/headers'
import type { HoldVerdict } from '../core/hold'
import { formatStep } from '../core/naming'
import type { DialectName } from '../core/dialect'
import type { Change, StepMeta } from '../../generated/meta'

export type { StepMeta }
export type Outcome = NonNullable<StepMeta['outcome']>

/** What the send half records. */
export interface SendFacts {
  workspace: string
  agent: string
  n: number
  dialect: DialectName
  /** The path the client called, prefix removed, query kept. */
  path: string
  route: {
    provider: string
    url: URL
    role: string | null
    configCommit: string | null
    configNote: string | null
    plugin: string | null
  }
  identified: StepMeta['identified'] | undefined
  /** A plugin marked the step as a compaction request or the first step after one. */
  compaction?: StepMeta['compaction']
  /** The prompt cache key the sent body carries (openai, responses), if any. */
  promptCacheKey?: string
  /** The sent body's model, if it names one. */
  model: string | null
  requestHeaders: Readonly<Record<string, string>>
  keyingHeaders: Record<string, string>
  hold: HoldVerdict
  /** The tools the client sent, by name, when the hold sent another array. */
  clientTools?: string[]
  /** Whether the sent body asks the provider to compare its cache with an earlier answer, and which. */
  providerCache: { asked: boolean; comparedWith: string | null }
  injected: string[]
  /** Loaded tools the harness declared itself (not injected). */
  harnessTools: string[]
  changes: Change[]
  requestBytes: number
  /** A WebSocket frame's facts (its kind, where its exact bytes are, what it continues). */
  websocket?: StepMeta['websocket']
}

export function sendMeta(s: SendFacts): StepMeta {
  return {
    version: 1,
    workspace: s.workspace,
    agent: s.agent,
    step: formatStep(s.n),
    dialect: s.dialect,
    endpoint: redactQuery(s.path),
    started_at: new Date().toISOString(),
    route: {
      provider: s.route.provider,
      url: redactQuery(s.route.url.href),
      model: s.model,
      role: s.route.role,
      config_commit: s.route.configCommit,
      config_note: s.route.configNote,
      plugin: s.route.plugin,
    },
    ...(s.identified ? { identified: s.identified } : {}),
    ...(s.compaction ? { compaction: s.compaction } : {}),
    ...(s.promptCacheKey !== undefined ? { prompt_cache_key: s.promptCacheKey } : {}),
    request_headers: { ...s.requestHeaders },
    cache_keying_headers: s.keyingHeaders,
    hold: s.hold,
    ...(s.clientTools ? { client_tools: s.clientTools } : {}),
    provider_cache: { asked: s.providerCache.asked, compared_with: s.providerCache.comparedWith },
    injected_tools: s.injected,
    ...(s.harnessTools.length > 0 ? { harness_tools: s.harnessTools } : {}),
    changes: s.changes,
    request_bytes: s.requestBytes,
    ...(s.websocket ? { websocket: s.websocket } : {}),
  }
}

/** What the forward learned of the answer (the body itself is read by the finish). */
export interface Answered {
  outcome: Outcome
  status: number | null
  headers: Record<string, string | string[] | undefined>
  ttfbMs: number | null
  totalMs: number
  error: { code: string; message: string } | null
  /** When it ended (ISO); now when absent. */
  endedAt?: string
}

export const headerText = (v: string | string[] | undefined): string =>
  Array.isArray(v) ? v.join(', ') : (v ?? '')

/** The provider's response headers as meta.json keeps them: joined, no `set-cookie`. */
export function recordedResponseHeaders(
  headers: Record<string, string | string[] | undefined>,
): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(headers))
    if (v !== undefined && k !== 'set-cookie') out[k] = headerText(v)
  return out
}

const round = (ms: number): number => Math.round(ms * 100) / 100

/** The meta with the answer's half as the forward knows it (usage, cost, stop reason: the finish's). */
export function answeredMeta(sent: StepMeta, a: Answered): StepMeta {
  return {
    ...sent,
    ended_at: a.endedAt ?? new Date().toISOString(),
    ttfb_ms: a.ttfbMs === null ? null : round(a.ttfbMs),
    total_ms: round(a.totalMs),
    status: a.status,
    outcome: a.outcome,
    response_headers: recordedResponseHeaders(a.headers),
    error: a.error,
  }
}
