/**
 * The answers of deciding hooks, checked: `identify` → `{workspace?, agent?, why?, compaction?}`, `route` →
 * `{role?, provider?, model?, why?}`, or nothing. Invariant: a malformed answer (a typo'd key, a
 * name that is not a path and ref component) fails closed as PLUGIN_FAILED naming the plugin and
 * the hook; an answer with no field set counts as no answer, so the next plugin decides.
 */
import { HoldfastError } from '../proxy/core/errors'
import { checkName } from '../proxy/core/naming'
import type { IdentifyDecision, RouteDecision } from './api'

function fields(
  plugin: string,
  hook: string,
  value: unknown,
  allowed: readonly string[],
): Record<string, string> | undefined {
  if (value === undefined || value === null) return undefined
  const expected = `{${allowed.map((k) => `${k}?`).join(', ')}} or nothing`
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new HoldfastError(
      'PLUGIN_FAILED',
      `plugin ${plugin} (${hook}) returned ${JSON.stringify(value)}; expected ${expected}`,
    )
  }
  const out: Record<string, string> = {}
  for (const [key, v] of Object.entries(value)) {
    if (v === undefined) continue
    if (!allowed.includes(key)) {
      throw new HoldfastError(
        'PLUGIN_FAILED',
        `plugin ${plugin} (${hook}) returned an unknown key "${key}"; expected ${expected}`,
      )
    }
    if (typeof v !== 'string' || v === '') {
      throw new HoldfastError(
        'PLUGIN_FAILED',
        `plugin ${plugin} (${hook}) returned ${key} ${JSON.stringify(v)}; expected a non-empty string`,
      )
    }
    out[key] = v
  }
  return Object.keys(out).some((k) => k !== 'why') ? out : undefined
}

/** An identify answer's `compaction`, checked: `{kind: "request"|"after", via}`. */
function checkCompaction(plugin: string, value: unknown): IdentifyDecision['compaction'] {
  const v = value as { kind?: unknown; via?: unknown } | null
  const ok =
    typeof v === 'object' &&
    v !== null &&
    !Array.isArray(v) &&
    (v.kind === 'request' || v.kind === 'after') &&
    typeof v.via === 'string' &&
    v.via !== '' &&
    Object.keys(v).every((k) => k === 'kind' || k === 'via')
  if (!ok)
    throw new HoldfastError(
      'PLUGIN_FAILED',
      `plugin ${plugin} (identify) returned compaction ${JSON.stringify(value)}; expected {kind: "request"|"after", via: string}`,
    )
  return { kind: v.kind as 'request' | 'after', via: v.via as string }
}

export function checkIdentify(plugin: string, value: unknown): IdentifyDecision | undefined {
  const raw = value as { compaction?: unknown } | null | undefined
  const marked =
    typeof raw === 'object' && raw !== null && !Array.isArray(raw) && raw.compaction !== undefined
  const compaction = marked ? checkCompaction(plugin, raw.compaction) : undefined
  const rest = marked ? { ...raw, compaction: undefined } : value
  const d = fields(plugin, 'identify', rest, ['workspace', 'agent', 'why'])
  if (!d) return compaction ? { compaction } : undefined
  if (compaction) (d as IdentifyDecision).compaction = compaction
  for (const kind of ['workspace', 'agent'] as const) {
    const problem = d[kind] === undefined ? undefined : checkName(kind, d[kind])
    if (problem)
      throw new HoldfastError(
        'PLUGIN_FAILED',
        `plugin ${plugin} (identify) returned a bad ${kind}: ${problem}`,
      )
  }
  return d
}

export function checkRoute(plugin: string, value: unknown): RouteDecision | undefined {
  const d = fields(plugin, 'route', value, ['role', 'provider', 'model', 'why'])
  const problem = d?.role === undefined ? undefined : checkName('role', d.role)
  if (problem)
    throw new HoldfastError('PLUGIN_FAILED', `plugin ${plugin} (route) returned a bad role: ${problem}`)
  return d
}
