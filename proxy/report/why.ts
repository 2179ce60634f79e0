/**
 * `why` as data (`holdfast why`, the view's step page): what moved in the cached prefix between a
 * step and the one before (model, system, tools, head, cache-keying fields, the first difference
 * with an excerpt of both sides), a compaction, whether the hold applied and which tools it held,
 * and the provider's own cache counters, as sentences (proxy/core/why-words); and the one cause
 * of what its cache did, the provider's word quoted (proxy/core/cache-cause). Invariant: a previous
 * record that cannot be read back is said, never compared.
 */
import type { JsonObject } from '../core/json'
import { formatStep, parseStep } from '../core/naming'
import { prefixMoves, type PrefixMoves } from '../core/why'
import { explainStep, type WhyFacts } from '../core/why-words'
import { type Cause, causeLines, causeOf, MISS_SHARE, type ProviderSaid } from '../core/cache-cause'
import type { StepRow } from './steps'
import { isAttemptChild } from '../core/attempt'
import { dialectByName } from '../dialects'
import type { StepMeta } from '../../generated/meta'
import { readStepFile, readStepMeta, readStepRequest } from '../record/read'
import { REQUEST_FILE } from '../core/layout'
import { RecordFault } from '../core/hold'
import { recordParser } from '../core/record'
import type { Workspace } from '../store/workspace'
import { existingAgent, NotFound, readableWorkspace } from './lookup'

export interface WhyReport {
  step: string
  previous: string | null
  /** The one cause of what the step's cache did (proxy/core/cache-cause). */
  cause: Cause
  /** What the provider said about its cache, when the request asked; null when not asked. */
  provider: ProviderSaid | null
  /** holdfast's own reading of the two requests, and whether the provider's word points elsewhere. */
  own_cause: Cause
  disagree: boolean
  /** The cause in sentences: its name, the provider's word verbatim, a disagreement with holdfast's diff. */
  cause_lines: string[]
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

export { otherConversation } from '../core/why-words'

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
  let moves: PrefixMoves | null = null
  const facts: WhyFacts = { step: formatStep(n), meta }
  if (prevFault) facts.nothingToCompare = `${prevFault}: nothing to compare`
  else if (!prev || !prevMeta) {
    facts.nothingToCompare =
      n === 1
        ? 'first step: the whole prefix is new'
        : `step ${formatStep(n - 1)} has no record: nothing to compare`
  } else {
    moves = prefixMoves(dialect, prev, cur, prevMeta.cache_keying_headers, meta.cache_keying_headers)
    facts.previous = { step: formatStep(n - 1), meta: prevMeta, moves }
  }
  const summary = explainStep(facts)
  const h = meta.hold
  const cause = causeOf({
    meta,
    ...(facts.previous ? { previous: { meta: facts.previous.meta, moves: facts.previous.moves } } : {}),
    fork: n === 1 && isAttemptChild(meta.agent),
    first: n === 1,
  })
  return {
    step: formatStep(n),
    previous: prev ? formatStep(n - 1) : null,
    cause: cause.cause,
    provider: cause.provider,
    own_cause: cause.own,
    disagree: cause.disagree,
    cause_lines: causeLines(cause),
    moves,
    hold: h,
    usage: meta.usage ?? null,
    changes: meta.changes,
    summary,
  }
}

/** Committed steps' listed causes, by `<gitdir>\0<agent>\0<n>`: a committed step never changes. */
const listed = new Map<string, Cause>()
const LISTED_MAX = 100_000

/**
 * A step's cause for a list (the agent page's timeline, the status line), the one `why` gives it,
 * at the cost of a `why` (two requests read) only where one is needed: the agent's first step is
 * `first_step` (`fork` for an attempt), a held step `held`, a step whose reads came up to what the
 * step before left cached `no_miss`; a step whose reads fell short gets `why`'s cause; one with
 * nothing cached before it and nothing read, null (no cache in use). Each committed step once.
 */
export async function listedCause(
  ws: Workspace,
  agent: string,
  row: Pick<StepRow, 'step' | 'held' | 'reordered' | 'cache_read' | 'cache_write' | 'state'>,
  before: Pick<StepRow, 'cache_read' | 'cache_write'> | undefined,
): Promise<Cause | null> {
  const n = stepNumber(row.step)
  if (n === 1) return isAttemptChild(agent) ? 'fork' : 'first_step'
  if (row.held.length > 0 || row.reordered) return 'held'
  const left = (before?.cache_read ?? 0) + (before?.cache_write ?? 0)
  const read = row.cache_read ?? 0
  if (left === 0) return read > 0 ? 'no_miss' : null
  if (read >= MISS_SHARE * left) return 'no_miss'
  const key = `${ws.repo.gitdir}\0${agent}\0${n}`
  const known = listed.get(key)
  if (known) return known
  const cause = await why(ws.home, ws.name, agent, row.step).then(
    (r) => r.cause,
    () => null,
  )
  if (cause && row.state === 'committed') {
    if (listed.size >= LISTED_MAX) listed.clear()
    listed.set(key, cause)
  }
  return cause
}
