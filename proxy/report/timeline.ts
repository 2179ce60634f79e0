/**
 * An agent's timeline as data (the view's agent page, its live stream and its export): one row per
 * step as report/steps makes it for `holdfast steps`, with its number and a compaction said by the
 * record (or, for older records, by Claude Code's request-class header), and the agent's loaded
 * tools. Invariant: the rows are report/steps' rows, so the page and the CLI agree.
 */
import type { StepMeta } from '../../generated/meta'
import { presentedName } from '../core/loaded-set'
import { readLoadedSet } from '../store/loaded-sets'
import type { Workspace } from '../store/workspace'
import { stepRecords, stepRow, type StepRow, unfinishedOutcome } from './steps'

export interface TimelineRow extends StepRow {
  n: number
}

export interface AgentData {
  ws: string
  agent: string
  rows: TimelineRow[]
  tools: { presented: string; client: string; description: string }[]
}

const COMPACTION_HEADER = 'x-claude-code-request-class'

/** A row with its number; a compaction from meta.json's mark, else (older records) Claude Code's request-class header. */
export function timelineRow(n: number, row: StepRow, meta: StepMeta | undefined): TimelineRow {
  const said = meta?.request_headers?.[COMPACTION_HEADER]?.toLowerCase() === 'compaction'
  return { ...row, n, compaction: row.compaction ?? (said ? 'request' : null) }
}

/** The timeline's rows after step `after` (all with 0). */
export async function timelineRows(ws: Workspace, agent: string, after = 0): Promise<TimelineRow[]> {
  const unfinished = unfinishedOutcome(ws.home)
  return (await stepRecords(ws, agent))
    .filter((r) => r.ref.n > after)
    .map((r) => timelineRow(r.ref.n, stepRow(r, unfinished), r.meta))
}

export async function agentData(ws: Workspace, agent: string): Promise<AgentData> {
  const tools = readLoadedSet(ws.home, ws.name, agent).map((e) => ({
    presented: presentedName(e),
    client: e.client,
    description: e.tool.description,
  }))
  return { ws: ws.name, agent, rows: await timelineRows(ws, agent), tools }
}
