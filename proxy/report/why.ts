/**
 * `why` as data (`holdfast why`, the view's step page): what moved in the cached prefix between a
 * step and the one before (model, system, tools, head, cache-keying fields, the first differing
 * path), whether the hold applied and which tools it held, and the provider's own cache counters,
 * as sentences. Invariant: a previous record that cannot be read back is said, never compared.
 */
import type { JsonObject } from '../core/json'
import { formatStep, parseStep } from '../core/naming'
import { prefixMoves, type PrefixMoves } from '../core/why'
import { dialectByName } from '../dialects'
import type { StepMeta } from '../../generated/meta'
import { readStepFile, readStepMeta, readStepRequest } from '../record/read'
import { REQUEST_FILE } from '../record/layout'
import { RecordFault } from '../core/hold'
import { recordParser } from '../core/record'
import type { Workspace } from '../store/workspace'
import { existingAgent, NotFound, readableWorkspace } from './lookup'

export interface WhyReport {
  step: string
  previous: string | null
  moves: PrefixMoves | null
  hold: StepMeta['hold'] | null
  usage: StepMeta['usage'] | null
  changes: StepMeta['changes']
  summary: string[]
}

async function readRequest(ws: Workspace, agent: string, n: number): Promise<JsonObject | undefined> {
  try {
    return (await readStepRequest(ws, agent, n))?.body
  } catch (err) {
    throw new NotFound((err as Error).message)
  }
}

const SESSION_HEADER = 'x-claude-code-session-id'

/**
 * Why the previous step looks like another conversation's, if it does: another session id (Claude
 * Code sends one on every request), or both the system prompt and the first message differ.
 */
export function otherConversation(prev: StepMeta, cur: StepMeta, moves: PrefixMoves): string | undefined {
  const a = prev.request_headers?.[SESSION_HEADER]
  const b = cur.request_headers?.[SESSION_HEADER]
  if (a !== undefined && b !== undefined && a !== b) return `session ${a}; this step: session ${b}`
  if (moves.system && moves.head) return 'another system prompt and another first message'
  return undefined
}

/** A step number as typed (`2`, `002`); refused when it is none. */
export function stepNumber(stepName: string): number {
  const n = parseStep(stepName) ?? parseStep(stepName.padStart(3, '0'))
  if (n === undefined) throw new NotFound(`"${stepName}" is not a step number (001, 002, …)`)
  return n
}

/** What `why` reads of a step and the one before it. */
export interface WhyInput {
  n: number
  meta: StepMeta
  /** The step's request, parsed. */
  cur: JsonObject
  prevMeta: StepMeta | undefined
  /** The previous step's request.json as recorded (undefined: none). */
  prevBytes: Buffer | undefined
}

export async function why(
  home: string,
  wsName: string,
  agent: string,
  stepName: string,
  machine?: string,
): Promise<WhyReport> {
  const ws = await readableWorkspace(home, wsName, machine)
  await existingAgent(ws, agent)
  const n = stepNumber(stepName)
  const meta = await readStepMeta(ws, agent, n)
  const cur = await readRequest(ws, agent, n)
  if (!meta || !cur) throw new NotFound(`no step ${formatStep(n)} recorded for ${wsName}/${agent}`)
  const prevMeta = n > 1 ? await readStepMeta(ws, agent, n - 1) : undefined
  const prevBytes = n > 1 ? await readStepFile(ws, agent, n - 1, REQUEST_FILE) : undefined
  return whyOf({ n, meta, cur, prevMeta, prevBytes })
}

/** The report from what was read: the previous record read back as the hold reads it. */
export function whyOf({ n, meta, cur, prevMeta, prevBytes }: WhyInput): WhyReport {
  const dialect = dialectByName(meta.dialect)
  // A faulty previous record is said, not compared.
  let prev: JsonObject | undefined
  let prevFault: string | undefined
  if (n > 1) {
    try {
      prev = prevBytes && recordParser(dialect)(prevBytes, `step ${formatStep(n - 1)}'s request.json`)
    } catch (err) {
      if (!(err instanceof RecordFault)) throw err
      prevFault = err.message
    }
  }
  const summary: string[] = []
  let moves: PrefixMoves | null = null
  if (prevFault) summary.push(`${prevFault}: nothing to compare`)
  else if (!prev || !prevMeta) {
    summary.push(
      n === 1
        ? 'first step: the whole prefix is new'
        : `step ${formatStep(n - 1)} has no record: nothing to compare`,
    )
  } else {
    moves = prefixMoves(dialect, prev, cur, prevMeta.cache_keying_headers, meta.cache_keying_headers)
    const moved = [
      moves.model && 'model',
      moves.tools && 'tools',
      moves.system && 'system',
      moves.head && 'first message',
      ...moves.keying,
    ].filter(Boolean)
    summary.push(
      moved.length
        ? `moved since ${formatStep(n - 1)}: ${moved.join(', ')}`
        : `nothing ahead of the transcript moved since ${formatStep(n - 1)}`,
    )
    if (moves.firstDifference) summary.push(`first difference in cache order: ${moves.firstDifference}`)
    const other = otherConversation(prevMeta, meta, moves)
    if (other) summary.push(`step ${formatStep(n - 1)} came from another conversation (${other})`)
  }
  if (meta.harness_tools?.length)
    summary.push(`loaded tools the harness declared itself (not injected): ${meta.harness_tools.join(', ')}`)
  const h = meta.hold
  summary.push(
    h.applied
      ? `hold applied: re-sent step ${formatStep(n - 1)}'s tools array; held: ${h.held.join(', ')}`
      : `hold not applied: ${h.reason}${h.detail ? ` (${h.detail})` : ''}`,
  )
  if (meta.usage) {
    summary.push(
      `provider cache: read ${meta.usage.cache_read_tokens}, wrote ${meta.usage.cache_write_tokens}, uncached input ${meta.usage.input_tokens}`,
    )
  } else summary.push('provider cache: not reported')
  return {
    step: formatStep(n),
    previous: prev ? formatStep(n - 1) : null,
    moves,
    hold: h,
    usage: meta.usage ?? null,
    changes: meta.changes,
    summary,
  }
}
