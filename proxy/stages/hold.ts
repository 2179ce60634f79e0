/**
 * hold (DESIGN §5.5, §6, §7): compare the composition with the agent's previous record and apply
 * the hold (core/hold); then history closure on what is about to be sent — after the hold, so a
 * name the hold re-declares needs none, and a closure inside the composition cannot defeat it.
 * Invariant: the previous record is read in the same critical section that records this step
 * (pipeline); a previous record that is not a request sends the composition (`record-fault`).
 */
import { hold as applyHold, type HoldVerdict, type PreviousStep, RecordFault } from '../core/hold'
import { withHistoryClosed } from '../core/history-closure'
import { type PrefixMoves, prefixMoves } from '../core/why'
import type { Json, JsonObject } from '../core/json'
import type { ScannedTop } from '../core/json-scan'
import type { Dialect } from '../core/dialect'
import type { Change } from '../../generated/meta'
import type { Identified } from '../../plugins/runner'
import type { ServerContext } from '../live/context'
import type { Accepted } from './accept'
import type { Composition } from './compose'

/** hold's value: exactly what goes upstream, and why. */
export interface Held {
  bytes: Buffer
  parsed: JsonObject
  /** scanTopLevel(bytes), when the bytes are the composition's and it had one. */
  top?: ScannedTop
  verdict: HoldVerdict
  /** The tools the client sent, by name in its order, when the hold sent the previous array instead. */
  clientTools?: string[]
  /** The composition's changes, then the hold's and the history closure's. */
  changes: Change[]
  injected: string[]
  harnessTools: string[]
  keyingHeaders: Record<string, string>
  /** What moved since the previous step's request (telemetry on, the previous request's read known). */
  moves?: PrefixMoves
}

export function hold(
  ctx: ServerContext,
  request: Accepted,
  composed: Composition,
  previous: PreviousStep | RecordFault | undefined,
  /** The step's number (a recorded step), for what moved since the one before. */
  n?: number,
): Held {
  const { dialect } = request
  const keyingHeaders = dialect.keyingHeaders(request.headers)
  const result = applyHold(
    dialect,
    previous,
    { ...composed, headers: keyingHeaders },
    { now: Date.now(), ttlMs: ctx.holdTtlMs, longTtlMs: ctx.holdLongTtlMs },
  )
  const v = result.verdict
  const changes = [...composed.changes]
  let parsed = composed.parsed
  let clientTools: string[] | undefined
  if (v.applied && previous && !(previous instanceof RecordFault)) {
    const own = Array.isArray(composed.parsed.tools) ? composed.parsed.tools : []
    clientTools = own.map((t, i) => dialect.toolName(t) ?? `tools[${i}]`)
    parsed = { ...composed.parsed, tools: previous.parsed.tools as Json }
    const what = [
      v.held.length > 0 ? `held: ${v.held.join(', ')}` : '',
      v.reordered ? 'the client reordered the tools it kept' : '',
    ].filter(Boolean)
    changes.push({ field: 'tools', why: `hold: re-sent the previous step's tools array; ${what.join('; ')}` })
  }
  const closed = withHistoryClosed(dialect, result.body, parsed, Object.keys(ctx.config.clients ?? {}))
  if (closed) {
    parsed = closed.parsed
    changes.push({
      field: 'tools',
      why: `history closure: declared ${closed.names.join(', ')} (called in the transcript, no longer loaded) with its refusal as description`,
    })
  }
  const moves = n === undefined ? undefined : movesSince(ctx, request, previous, parsed, keyingHeaders, n)
  return {
    ...(moves ? { moves } : {}),
    bytes: closed?.bytes ?? result.body,
    parsed,
    top: closed || v.applied ? undefined : composed.top,
    verdict: v,
    ...(clientTools ? { clientTools } : {}),
    changes,
    injected: composed.injected,
    harnessTools: composed.harnessTools,
    keyingHeaders,
  }
}

/**
 * What moved since step `n - 1`'s request, for the span's cause (telemetry on): its kept copy (the
 * fields ahead of the transcript, as sent) with the transcript of its read (compose and the hold
 * never change the transcript), when that read is of step `n - 1`. Read that way, the transcript's
 * entries are mostly the same values as this request's, and the comparison passes them by.
 */
function movesSince(
  ctx: ServerContext,
  request: Accepted,
  previous: PreviousStep | RecordFault | undefined,
  parsed: JsonObject,
  headers: Record<string, string>,
  n: number,
): PrefixMoves | undefined {
  const read = request.previousRead
  if (!ctx.telemetry || !read || !previous || previous instanceof RecordFault) return undefined
  if (ctx.reads.stepOf(read) !== n - 1) return undefined
  const field = request.dialect.transcriptField
  const sent = { ...previous.parsed, [field]: read.parsed[field] as Json }
  return prefixMoves(request.dialect, sent, parsed, previous.headers, headers)
}

/** The previous record a `count_tokens` call holds against; it reads, and never creates, a workspace. */
export async function previousForCount(
  ctx: ServerContext,
  who: Identified,
  dialect: Dialect,
): Promise<PreviousStep | RecordFault | undefined> {
  if (!ctx.workspace(who.workspace).exists()) return undefined
  const agent = ctx.agent(who.workspace, who.agent)
  await agent.init()
  return await ctx.records.previous(agent, agent.next, dialect)
}
