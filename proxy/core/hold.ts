/**
 * The hold (DESIGN §6 as amended, seed 001): when the tools are a sub-multiset of the previous
 * step's — every definition identical (markers aside) to one sent then, in any order — and the
 * arrays differ (fewer, or reordered), and nothing else ahead of the transcript moved, send the
 * previous step's tools array, exactly as recorded. Invariant: a prefix edit goes out only at a
 * boundary that already invalidates the prefix; an addition or an edited definition is never
 * held. The queue lives in the previous record's `request.json`, nowhere else. No previous record
 * (a first step) → the composition, as is.
 */
import type { Dialect } from './dialect'
import type { Json, JsonObject } from './json'
import { isObject, sameIgnoringCacheControl } from './json'
import type { ScannedTop } from './json-scan'
import { applyEdits } from './splice'
import { scanTopLevel } from './json-scan'
import { subMultiset } from './tool-match'

export interface PreviousStep {
  /** The record's request.json path, for fault messages. */
  path: string
  /** request.json bytes as recorded. */
  bytes: Buffer
  /**
   * JSON.parse of `bytes` (callers cache it; the hold never re-parses). Only the top-level fields
   * and the transcript's system part and head are read, so a caller may keep just those.
   */
  parsed: JsonObject
  /** Whether any `cache_control` of the request asks for the 1 h lifetime; computed from `parsed` when absent. */
  longTtl?: boolean
  /** scanTopLevel(bytes) if the caller has it cached; else the hold scans when it substitutes. */
  top?: ScannedTop
  /** Epoch ms the previous step was sent. */
  sentAt: number
  /** Its cache-keying request headers (lower-case names, e.g. `anthropic-beta`). */
  headers: Readonly<Record<string, string | undefined>>
  /** Its response status once known (undefined while in flight or unknown). */
  status?: number
}

export interface Composed {
  bytes: Buffer
  parsed: JsonObject
  /** scanTopLevel(bytes) when the caller has it; else the hold scans only when it substitutes. */
  top?: ScannedTop
  headers: Readonly<Record<string, string | undefined>>
}

export interface HoldContext {
  now: number
  /** Default 5 min: the providers' default cache lifetime. */
  ttlMs?: number
  /** Default 1 h, used when the previous request carried a `cache_control` with `ttl: "1h"`. */
  longTtlMs?: number
  /** Default 4: anthropic's limit of cache breakpoints per request. */
  maxBreakpoints?: number
}

export type HoldReason =
  | 'first-step'
  | 'applied'
  | 'no-subtraction'
  | 'not-a-sub-multiset'
  | 'model-changed'
  | 'system-changed'
  | 'head-changed'
  | 'keying-changed'
  | 'ttl-expired'
  | 'breakpoint-limit'
  | 'previous-refused'
  | 'record-fault'
  /** A WebSocket frame without `tools`: the socket keeps the tools last declared, the frame is left alone. */
  | 'tools-inherited'
  /** A WebSocket frame that is no request (binary, not JSON, another type): passed as it came. */
  | 'not-a-request'

export interface HoldVerdict {
  applied: boolean
  reason: HoldReason
  /** e.g. which keying field moved: `tool_choice`. */
  detail?: string
  /** Names of the tools sent that the composition had dropped (empty unless applied). */
  held: string[]
  /** Set (true) when applied and the composition had the kept tools in another order. */
  reordered?: true
}

export interface HoldResult {
  body: Buffer
  verdict: HoldVerdict
}

/**
 * A fault of the record: the previous request.json cannot be read back as a request. It never
 * blocks the agent: the step is sent as composed, with the hold verdict `record-fault`.
 */
export class RecordFault extends Error {
  readonly path: string
  readonly problem: string
  constructor(path: string, problem: string) {
    super(`the record ${path} cannot be read back as a request: ${problem}`)
    this.name = 'RecordFault'
    this.path = path
    this.problem = problem
  }
}

/** https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching (lifetimes, 4 breakpoints) */
export const CACHE_TTL_MS = 5 * 60_000
export const LONG_CACHE_TTL_MS = 60 * 60_000
export const MAX_BREAKPOINTS = 4

export function hold(
  dialect: Dialect,
  /** The previous step's record; a RecordFault when it could not be read back; undefined when none. */
  previous: PreviousStep | RecordFault | undefined,
  composed: Composed,
  ctx: HoldContext,
): HoldResult {
  const whole = (reason: HoldReason, detail?: string): HoldResult => ({
    body: composed.bytes,
    verdict:
      detail === undefined
        ? { applied: false, reason, held: [] }
        : { applied: false, reason, detail, held: [] },
  })
  if (previous === undefined) return whole('first-step')
  // A record that cannot be read back never blocks the agent: the composition goes as it is.
  if (previous instanceof RecordFault) {
    return whole(
      'record-fault',
      `the previous step's request.json cannot be read back as a request: ${previous.problem}`,
    )
  }

  const now = dialect.facets(composed.parsed, composed.headers)
  const refused = previous.status !== undefined && previous.status >= 400 && previous.status < 500
  const recorded = previous.parsed.tools
  if (recorded !== undefined && !Array.isArray(recorded)) {
    // A refused array is never sent again, so it need not read back.
    if (refused) return whole('previous-refused')
    return whole('record-fault', 'its "tools" is not an array')
  }
  // Whether there is anything to hold comes first: it reads the tools arrays only, where the
  // prefix comparisons below read the system and the first message (one of them can be a
  // megabyte: comparing it costs a flat copy of it), and most steps remove no tool.
  const prevTools = recorded ?? []
  // A composition whose own `tools` is malformed goes out as it is, for the provider to refuse.
  if (composed.parsed.tools !== undefined && now.tools === undefined) return whole('not-a-sub-multiset')
  const nowTools = now.tools ?? []
  const match = subMultiset(prevTools, nowTools, (t) => dialect.toolName(t))
  if (match === undefined) return whole('not-a-sub-multiset')
  const { dropped, reordered } = match
  if (dropped.length === 0 && !reordered) return whole('no-subtraction')

  const was = dialect.facets(previous.parsed, previous.headers)
  if (!sameIgnoringCacheControl(was.model, now.model)) return whole('model-changed')
  if (!sameIgnoringCacheControl(was.system, now.system)) return whole('system-changed')
  if (!startsWith(now.head ?? [], was.head ?? [])) return whole('head-changed')
  for (const field of new Set([...Object.keys(was.keying), ...Object.keys(now.keying)])) {
    if (!sameIgnoringCacheControl(was.keying[field], now.keying[field])) return whole('keying-changed', field)
  }

  if (refused) return whole('previous-refused')
  const age = ctx.now - previous.sentAt
  const ttl = ctx.ttlMs ?? CACHE_TTL_MS
  if (
    age > ttl &&
    !((previous.longTtl ?? hasLongTtl(previous.parsed)) && age <= (ctx.longTtlMs ?? LONG_CACHE_TTL_MS))
  ) {
    return whole('ttl-expired')
  }
  const marks =
    dialect.breakpoints(composed.parsed) -
    dialect.breakpoints({ tools: nowTools }) +
    dialect.breakpoints({ tools: prevTools })
  if (marks > (ctx.maxBreakpoints ?? MAX_BREAKPOINTS))
    return whole('breakpoint-limit', `${marks} breakpoints`)

  const bad = prevTools.findIndex((t) => !isObject(t))
  if (bad !== -1) return whole('record-fault', `its tools[${bad}] is not a JSON object`)
  const top = previous.top ?? scanTopLevel(previous.bytes)
  if (!top.ok) return whole('record-fault', top.error)
  const span = top.keys.get('tools')
  if (span === undefined) return whole('record-fault', 'its "tools" key is not at the top level')
  const into = composed.top ?? scanTopLevel(composed.bytes)
  if (!into.ok) throw new Error(`the composed request does not scan: ${into.error}`)
  const body = applyEdits(composed.bytes, into, [
    { key: 'tools', value: previous.bytes.subarray(span.valueStart, span.valueEnd) },
  ])
  const held = dropped.map((i) => heldName(dialect, prevTools[i], i))
  const verdict: HoldVerdict = { applied: true, reason: 'applied', held }
  if (reordered) verdict.reordered = true
  return { body, verdict }
}

/** `blocks` begins with every block of `prefix`, in order, markers ignored (an empty prefix always). */
function startsWith(blocks: readonly Json[], prefix: readonly Json[]): boolean {
  if (prefix.length > blocks.length) return false
  return prefix.every((b, i) => sameIgnoringCacheControl(b, blocks[i]))
}

function heldName(dialect: Dialect, tool: Json | undefined, index: number): string {
  const name = tool === undefined ? undefined : dialect.toolName(tool)
  if (name !== undefined) return name
  return isObject(tool) && typeof tool.type === 'string' ? tool.type : `tools[${index}]`
}

/** Any `cache_control` in the request asks for the one-hour lifetime. */
export function hasLongTtl(v: Json | undefined): boolean {
  if (Array.isArray(v)) return v.some(hasLongTtl)
  if (!isObject(v)) return false
  const cc = v.cache_control
  if (isObject(cc) && cc.ttl === '1h') return true
  return Object.values(v).some(hasLongTtl)
}
