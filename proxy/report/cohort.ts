/**
 * A cohort as rows (`holdfast cohort`, the view's cohort page): the attempts hanging on one notch,
 * derived from the refs by proxy/attempts/cohort (no registry), each with its role, model, stop
 * reason, tokens, cost, time and answer; with its notch's names, the cohort page's data. Invariant: a member whose first step is not answered yet
 * is listed with nulls (pending), never left out.
 */
import { cohortOf } from '../attempts/cohort'
import type { Usage } from '../../generated/meta'
import { formatStep } from '../core/naming'
import type { Workspace } from '../store/workspace'
import { NotFound } from './lookup'

export interface CohortRow {
  child: string
  role: string
  model: string | null
  stop_reason: string | null
  status: number | null
  /** ok, upstream_error, …; null while the first step is not finished. */
  outcome: string | null
  usage: Usage | null
  cost_usd: number | null
  total_ms: number | null
  answer: string | null
}

export interface CohortReport {
  /** The notch commit. */
  notch: string
  members: CohortRow[]
}

/** The cohort of a notch (`<agent>@<NNN>`, a commit, `agents/<agent>`, `config/<name>`); refused when it resolves to nothing. */
export async function cohortReport(ws: Workspace, notchRef: string): Promise<CohortReport> {
  const { notch, members } = await cohortOf(ws, notchRef).catch((err: Error) => {
    throw new NotFound(err.message)
  })
  return {
    notch,
    members: members.map((m) => ({
      child: m.child,
      role: m.role,
      model: m.meta?.route.model ?? null,
      stop_reason: m.meta?.stop_reason ?? null,
      status: m.meta?.status ?? null,
      outcome: m.meta?.outcome ?? null,
      usage: m.meta?.usage ?? null,
      cost_usd: m.meta?.cost?.usd ?? null,
      total_ms: m.meta?.total_ms ?? null,
      answer: m.answer ?? null,
    })),
  }
}

export interface CohortData {
  ws: string
  agent: string
  n: number
  report: CohortReport
}

export async function cohortData(ws: Workspace, agent: string, n: number): Promise<CohortData> {
  return { ws: ws.name, agent, n, report: await cohortReport(ws, `${agent}@${formatStep(n)}`) }
}
