/**
 * An agent's steps as rows (`holdfast steps`, the view's timeline, the status line): tokens, cache
 * reads and writes, cost, what the hold saved (and whether it held a reorder), a compaction,
 * timings, committed or pending; a keep-warm ping, and on the step it kept warm what its pings
 * cost and saved (report/pings). Read from git and the
 * journal through record/read; no server needed. Invariant: one row per step, in step order, each
 * column meaning one thing everywhere it is shown; a step whose meta is missing has nulls.
 */
import type { StepMeta } from '../../generated/meta'
import { fitName, formatStep } from '../core/naming'
import { META_FILE, agentStepsPath, stepTreePath } from '../core/layout'
import { whyMissing } from '../record/recover/quarantine'
import { listSteps, readStepMeta, type StepRef } from '../record/read'
import { getTree, listDir, readFileAt, readRef } from '../store/git'
import { readServeInfo } from '../store/serve-lock'
import type { Workspace } from '../store/workspace'
import { BATCH_MIN, catBlobs, keepMeta, keepMetaOid, keptMeta, keptMetaOid, lsFiles } from './blobs'
import { existingAgent, readableWorkspace } from './lookup'
import { keepWarmOf, type KeepWarm, pingOf, priceBook } from './pings'

export interface StepRow {
  step: string
  time: string | null
  model: string | null
  status: number | null
  outcome: string | null
  held: string[]
  /** The hold applied and the client had moved the tools it kept. */
  reordered: boolean
  hold_reason: string | null
  /** `request`: a compaction (the model summarises the conversation); `after`: the first step after one. */
  compaction: 'request' | 'after' | null
  input: number | null
  cache_read: number | null
  cache_write: number | null
  output: number | null
  cost_usd: number | null
  saved_usd: number | null
  ttfb_ms: number | null
  total_ms: number | null
  /** `missing`: a number given out whose record was lost (`note` says why and where its bytes are). */
  state: 'committed' | 'pending' | 'missing'
  note?: string
  /** A keep-warm ping (a step of `<agent>.aux`): the step of `<agent>` it kept warm. */
  ping_of?: string
  /** The keep-warm pings after this step: what they cost and what the next step saved by them. */
  keep_warm?: KeepWarm
}

/** One step as recorded: where it is and its meta (undefined when the step has none yet). */
export interface StepRecord {
  ref: StepRef
  meta: StepMeta | undefined
}

const parseMeta = (bytes: Buffer, agent: string, n: number): StepMeta => {
  try {
    return JSON.parse(bytes.toString('utf8')) as StepMeta
  } catch (err) {
    throw new Error(
      `the meta.json of step ${formatStep(n)} of ${agent} is not JSON: ${(err as Error).message}`,
      {
        cause: err,
      },
    )
  }
}

/**
 * Every step of an agent with its meta, in step order. Committed metas are found at one tip by
 * their blob ids: kept ones reused, the others read in one batch (report/blobs); pending ones come
 * from the journal.
 */
export async function stepRecords(ws: Workspace, agent: string): Promise<StepRecord[]> {
  const tip = await readRef(ws.repo, ws.branch(agent))
  const refs = await listSteps(ws, agent)
  const metaOid = new Map<number, string>()
  if (tip) {
    const dirs = new Map<string, string>()
    for (const e of (await listDir(ws.repo, tip, agentStepsPath(agent))) ?? []) dirs.set(e.name, e.oid)
    const committed = refs.filter((r) => r.committed && dirs.has(formatStep(r.n)))
    const unknown = committed.filter((r) => !keptMetaOid(dirs.get(formatStep(r.n)) as string)).length
    // Many step trees not seen yet: one ls-tree lists them all; else their trees answer.
    const listed =
      unknown >= BATCH_MIN
        ? await lsFiles(ws.repo.gitdir, tip, agentStepsPath(agent)).catch(() => undefined)
        : undefined
    for (const ref of committed) {
      const name = formatStep(ref.n)
      const dir = dirs.get(name) as string
      let oid = keptMetaOid(dir)
      oid ??= listed
        ? listed.get(`${name}/${META_FILE}`)
        : (await getTree(ws.repo, dir)).find((e) => e.path === META_FILE)?.oid
      if (oid) {
        keepMetaOid(dir, oid)
        metaOid.set(ref.n, oid)
      }
    }
  }
  const missing = [...metaOid.values()].filter((oid) => !keptMeta(oid))
  const batch =
    missing.length >= BATCH_MIN ? await catBlobs(ws.repo.gitdir, missing).catch(() => undefined) : undefined
  const out: StepRecord[] = []
  for (const ref of refs) {
    const oid = metaOid.get(ref.n)
    let meta = oid ? keptMeta(oid) : undefined
    if (!meta && oid) {
      const bytes =
        batch?.get(oid) ??
        (tip ? await readFileAt(ws.repo, tip, `${stepTreePath(agent, ref.n)}/${META_FILE}`) : undefined)
      if (bytes) keepMeta(oid, (meta = parseMeta(bytes, agent, ref.n)))
    }
    meta ??= await readStepMeta(ws, agent, ref.n)
    out.push({ ref, meta })
  }
  return out
}

/**
 * What an unfinished step is: in flight while a server runs; otherwise it was cut off, and the next
 * start records it as interrupted.
 */
export const unfinishedOutcome = (home: string): string => (readServeInfo(home) ? 'in flight' : 'interrupted')

/** The row of one step. */
export function stepRow(r: StepRecord, unfinished: string): StepRow {
  const m = r.meta
  return {
    step: formatStep(r.ref.n),
    time: m?.started_at ?? null,
    model: m?.route.model ?? null,
    status: m?.status ?? null,
    outcome: m?.outcome ?? (m ? unfinished : null),
    held: m?.hold.applied ? m.hold.held : [],
    reordered: m?.hold.applied === true && m.hold.reordered === true,
    hold_reason: m?.hold.reason ?? null,
    compaction: m?.compaction?.kind ?? null,
    input: m?.usage?.input_tokens ?? null,
    cache_read: m?.usage?.cache_read_tokens ?? null,
    cache_write: m?.usage?.cache_write_tokens ?? null,
    output: m?.usage?.output_tokens ?? null,
    cost_usd: m?.cost?.usd ?? null,
    saved_usd: m?.cost?.saved_by_hold_usd ?? null,
    ttfb_ms: m?.ttfb_ms ?? null,
    total_ms: m?.total_ms ?? null,
    state: r.ref.committed ? 'committed' : 'pending',
    ...(pingOf(m) !== undefined ? { ping_of: formatStep(pingOf(m) as number) } : {}),
  }
}

/** An agent's step rows; `machine`: a teammate's agent, fetched from the remote. */
export async function stepRows(
  home: string,
  wsName: string,
  agent: string,
  machine?: string,
): Promise<StepRow[]> {
  const ws = await readableWorkspace(home, wsName, machine)
  await existingAgent(ws, agent)
  const unfinished = unfinishedOutcome(home)
  const records = await stepRecords(ws, agent)
  const rows = records.map((r) => stepRow(r, unfinished))
  // Keep-warm pings go to the agent's .aux sibling: each group on the step it kept warm.
  const warm = keepWarmOf(records, await stepRecords(ws, fitName(`${agent}.aux`)), priceBook(home))
  for (const row of rows) {
    const w = warm.get(Number(row.step))
    if (w) row.keep_warm = w
  }
  return withGaps(ws, agent, rows)
}

/** `rows` with a `missing` row for each number between them that has no record (a gap is shown, never closed). */
export function withGaps(ws: Workspace, agent: string, rows: StepRow[]): StepRow[] {
  const out: StepRow[] = []
  let last: number | undefined
  for (const r of rows) {
    const n = Number(r.step)
    for (let g = (last ?? n) + 1; g < n; g++) out.push(missingRow(g, whyMissing(ws, agent, g)))
    out.push(r)
    last = n
  }
  return out
}

function missingRow(n: number, note: string): StepRow {
  return {
    step: formatStep(n),
    time: null,
    model: null,
    status: null,
    outcome: 'missing',
    held: [],
    reordered: false,
    hold_reason: null,
    compaction: null,
    input: null,
    cache_read: null,
    cache_write: null,
    output: null,
    cost_usd: null,
    saved_usd: null,
    ttfb_ms: null,
    total_ms: null,
    state: 'missing',
    note,
  }
}

/** Whether a row's cost is unknown: the step has usage but no table priced its model (never $0). */
export const costUnknown = (r: Pick<StepRow, 'cost_usd' | 'input'>): boolean =>
  r.cost_usd === null && r.input !== null

/**
 * The share of a step's prompt the provider read from its cache (cache read over all input
 * tokens), or null when the step reported no usage or no input.
 */
export function cacheReadShare(r: Pick<StepRow, 'input' | 'cache_read' | 'cache_write'>): number | null {
  if (r.input === null || r.cache_read === null) return null
  const all = r.input + r.cache_read + (r.cache_write ?? 0)
  return all === 0 ? null : r.cache_read / all
}

export interface Totals {
  input: number
  cache_read: number
  cache_write: number
  output: number
  cost_usd: number
  saved_usd: number
  unpriced: number
}

/** Sums of the rows' token and dollar columns; a cost is unknown when any priced step's is. */
export function totals(rows: readonly StepRow[]): Totals {
  const t = { input: 0, cache_read: 0, cache_write: 0, output: 0, cost_usd: 0, saved_usd: 0, unpriced: 0 }
  for (const r of rows) {
    t.input += r.input ?? 0
    t.cache_read += r.cache_read ?? 0
    t.cache_write += r.cache_write ?? 0
    t.output += r.output ?? 0
    t.cost_usd += r.cost_usd ?? 0
    t.saved_usd += r.saved_usd ?? 0
    if (costUnknown(r)) t.unpriced++
  }
  return t
}
