/**
 * An agent's timeline as data (the view's agent page, its live stream and its export): one row per
 * step as report/steps makes it for `holdfast steps`, with its number and a compaction said by the
 * record (or, for older records, by Claude Code's request-class header), and the agent's loaded
 * tools, each row with its cause (report/why listedCause). Invariant: the rows are report/steps'
 * rows, so the page and the CLI agree, and the cause is the one `holdfast why` gives.
 */
import type { StepMeta } from '../../generated/meta'
import { presentedName } from '../core/loaded-set'
import { readLoadedSet } from '../store/loaded-sets'
import type { Workspace } from '../store/workspace'
import { stepRecords, stepRow, type StepRow, unfinishedOutcome } from './steps'
import { listedCause } from './why'
import type { Cause } from '../core/cache-cause'

export interface TimelineRow extends StepRow {
  n: number
  /** The step's cause (report/why listedCause: the one `holdfast why` gives), null with no cache in use. */
  cause: Cause | null
}

export interface AgentData {
  ws: string
  agent: string
  rows: TimelineRow[]
  tools: { presented: string; client: string; description: string }[]
}

const COMPACTION_HEADER = 'x-claude-code-request-class'

/** A row with its number; a compaction from meta.json's mark, else (older records) Claude Code's request-class header. */
export function timelineRow(
  n: number,
  row: StepRow,
  meta: StepMeta | undefined,
  cause: Cause | null = null,
): TimelineRow {
  const said = meta?.request_headers?.[COMPACTION_HEADER]?.toLowerCase() === 'compaction'
  return { ...row, n, compaction: row.compaction ?? (said ? 'request' : null), cause }
}

/** The timeline's rows after step `after` (all with 0). */
export async function timelineRows(ws: Workspace, agent: string, after = 0): Promise<TimelineRow[]> {
  const unfinished = unfinishedOutcome(ws.home)
  const records = await stepRecords(ws, agent)
  const rows = records.map((r) => stepRow(r, unfinished))
  const out: TimelineRow[] = []
  for (const [i, r] of records.entries()) {
    if (r.ref.n <= after) continue
    const row = rows[i] as StepRow
    out.push(timelineRow(r.ref.n, row, r.meta, await listedCause(ws, agent, row, rows[i - 1])))
  }
  return out
}

export async function agentData(ws: Workspace, agent: string): Promise<AgentData> {
  const tools = readLoadedSet(ws.home, ws.name, agent).map((e) => ({
    presented: presentedName(e),
    client: e.client,
    description: e.tool.description,
  }))
  return { ws: ws.name, agent, rows: await timelineRows(ws, agent), tools }
}
