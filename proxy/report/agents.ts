/**
 * The agents of a workspace as rows (`holdfast agents`, the view's workspace and agents pages):
 * a split's parent and kind, first and last step, models, token and dollar totals, what the hold
 * saved, what its keep-warm pings cost and saved (report/pings: counted on the agent they kept
 * warm; the `.aux` row's cost has them too), how far each was pushed to the remote, and teammates' agents fetched from it; and an
 * attempt's notch; a workspace's row as the sums of its agents' (the view's workspaces page). Read from git, the journal and `remote/push.json`; no server needed. Invariant: an
 * agent's totals are the sums of its step rows (report/steps), so both pages say the same.
 */
import { dispatchOf } from '../attempts/cohort'
import { fitName, formatStep } from '../core/naming'
import { readCommitInfo, readRef } from '../store/git'
import { stepOfSubject } from '../core/layout'
import { listWorkspaces, Workspace } from '../store/workspace'
import { readPushState } from '../remote/state'
import { TeammateWorkspace, teammates, thisMachine } from '../remote/teammates'
import { agentsOf, existingWorkspace } from './lookup'
import { type StepRecord, stepRecords } from './steps'
import { keepWarmOf, keepWarmTotals, type KeepWarmTotals, priceBook, type PriceBook } from './pings'

export interface AgentRow {
  agent: string
  /** A teammate's machine, for an agent fetched from the remote (`holdfast remote fetch`); null (or absent) for this machine's. */
  machine?: string | null
  /** This machine's agents: the last step the remote holds (`remote/push.json`); null (or absent) when never pushed. */
  pushed?: number | null
  /** The agent this one was split from, by its name's last split suffix; null for a root. */
  parent: string | null
  /** How it was split: `subagent`, `side` (aux), `session`; `main` for a root. */
  kind: 'main' | 'subagent' | 'side' | 'session'
  steps: number
  first: string | null
  last: string | null
  models: string[]
  input: number
  cache_read: number
  cache_write: number
  output: number
  /** Summed over priced steps; `unpriced` counts the steps with usage but no price. */
  cost_usd: number
  unpriced: number
  /** Steps the hold applied to. */
  held_steps: number
  /** Cache writes the hold avoided: the held steps' cache reads (they would have been writes). */
  writes_avoided_tokens: number
  saved_usd: number
  /** Its keep-warm pings (recorded on its `.aux` sibling): what they cost and saved; absent when none. */
  keep_warm?: KeepWarmTotals
}

const SPLIT = /^(.+)\.(sub-[^.]+|aux|s-[^.]+)$/

/** The parent and kind of an agent, from its name. */
export function splitOf(agent: string): { parent: string | null; kind: AgentRow['kind'] } {
  const m = SPLIT.exec(agent)
  if (!m) return { parent: null, kind: 'main' }
  const suffix = m[2] as string
  const kind = suffix === 'aux' ? 'side' : suffix.startsWith('sub-') ? 'subagent' : 'session'
  return { parent: m[1] as string, kind }
}

/** An agent's row from its step records. */
export function agentRow(agent: string, records: readonly StepRecord[]): AgentRow {
  const row: AgentRow = {
    agent,
    machine: null,
    pushed: null,
    ...splitOf(agent),
    steps: 0,
    first: null,
    last: null,
    models: [],
    input: 0,
    cache_read: 0,
    cache_write: 0,
    output: 0,
    cost_usd: 0,
    unpriced: 0,
    held_steps: 0,
    writes_avoided_tokens: 0,
    saved_usd: 0,
  }
  const models = new Set<string>()
  for (const { meta: m } of records) {
    row.steps++
    if (!m) continue
    row.first ??= m.started_at
    row.last = m.started_at
    if (m.route.model) models.add(m.route.model)
    const u = m.usage
    if (u) {
      row.input += u.input_tokens
      row.cache_read += u.cache_read_tokens
      row.cache_write += u.cache_write_tokens
      row.output += u.output_tokens
      if (!m.cost) row.unpriced++
    }
    if (m.cost) {
      row.cost_usd += m.cost.usd
      row.saved_usd += m.cost.saved_by_hold_usd
    }
    if (m.hold.applied) {
      row.held_steps++
      row.writes_avoided_tokens += u?.cache_read_tokens ?? 0
    }
  }
  row.models = [...models]
  return row
}

/** The rows of `agents` from their records, each with the keep-warm pings its `.aux` sibling holds. */
export function agentRowsOf(
  records: ReadonlyMap<string, readonly StepRecord[]>,
  book: PriceBook,
): AgentRow[] {
  const rows: AgentRow[] = []
  for (const [agent, own] of records) {
    const row = agentRow(agent, own)
    const aux = records.get(fitName(`${agent}.aux`))
    const warm = aux ? keepWarmTotals(keepWarmOf(own, aux, book).values()) : undefined
    if (warm) row.keep_warm = warm
    if (row.steps > 0) rows.push(row)
  }
  return rows
}

async function recordsOf(ws: Workspace, agents: readonly string[]): Promise<Map<string, StepRecord[]>> {
  const out = new Map<string, StepRecord[]>()
  for (const agent of agents) out.set(agent, await stepRecords(ws, agent))
  return out
}

/** Every agent of the workspace that has steps, sorted by name. */
export async function workspaceAgentRows(ws: Workspace): Promise<AgentRow[]> {
  return agentRowsOf(await recordsOf(ws, await agentsOf(ws)), priceBook(ws.home))
}

/**
 * This machine's agents (with how far each was pushed to the remote), then each teammate
 * machine's, fetched from the remote by `holdfast remote fetch`.
 */
export async function agentRows(home: string, wsName: string): Promise<AgentRow[]> {
  const ws = await existingWorkspace(home, wsName)
  const pushed = readPushState(home, ws.name)?.agents ?? {}
  const rows: AgentRow[] = (await workspaceAgentRows(ws)).map((r) => ({
    ...r,
    pushed: pushed[r.agent]?.step ?? null,
  }))
  for (const [machine, agents] of await teammates(ws, thisMachine(home))) {
    const view = new TeammateWorkspace(home, ws.name, machine)
    for (const row of agentRowsOf(await recordsOf(view, agents), priceBook(home)))
      rows.push({ ...row, machine })
  }
  return rows
}

/** Where an attempt forks from: its role and notch (the step of another agent it continues). */
export interface AttemptOrigin {
  role: string
  /** The notch commit. */
  commit: string
  /** The notch's step, when the notch is a step commit (a clean start from config/* has none). */
  step: { agent: string; n: number; name: string } | null
}

/** `<parent>-<UTC compact timestamp>-<random>`, as core/attempt's childId makes them. */
const CHILD_ID = /-\d{8}T\d{6}Z-[0-9a-z]{1,8}$/

/**
 * The notch an agent was dispatched from, or undefined when it is no attempt. Only names shaped
 * like an attempt's child id are walked (through its own steps to its dispatch commit).
 */
export async function attemptOrigin(ws: Workspace, agent: string): Promise<AttemptOrigin | undefined> {
  if (!CHILD_ID.test(agent)) return undefined
  const tip = await readRef(ws.repo, ws.branch(agent))
  if (!tip) return undefined
  const d = await dispatchOf(ws, agent, tip)
  if (!d) return undefined
  const s = stepOfSubject((await readCommitInfo(ws.repo, d.parent)).message)
  return { role: d.role, commit: d.parent, step: s ? { ...s, name: formatStep(s.n) } : null }
}

/** The agent row's counters a workspace's row sums. */
const SUMMED = [
  'steps',
  'input',
  'cache_read',
  'cache_write',
  'output',
  'cost_usd',
  'unpriced',
  'held_steps',
  'saved_usd',
] as const satisfies readonly (keyof AgentRow)[]

export type WorkspaceRow = { ws: string; agents: number; last: string | null } & Pick<
  AgentRow,
  (typeof SUMMED)[number]
>

/** A workspace's row: the sums of its agents' rows. */
export function workspaceRow(ws: string, rows: readonly AgentRow[]): WorkspaceRow {
  const sum = (k: (typeof SUMMED)[number]): number => rows.reduce((n, r) => n + r[k], 0)
  let last: string | null = null
  for (const r of rows) if (r.last && (last === null || r.last > last)) last = r.last
  // In the order `--json` has always printed them: the steps, then the last step's time.
  const [steps, ...rest] = SUMMED
  return {
    ws,
    agents: rows.length,
    [steps]: sum(steps),
    last,
    ...Object.fromEntries(rest.map((k) => [k, sum(k)])),
  } as WorkspaceRow
}

export async function workspaceRows(home: string): Promise<WorkspaceRow[]> {
  const out: WorkspaceRow[] = []
  for (const name of (await listWorkspaces(home)).sort()) {
    out.push(workspaceRow(name, await workspaceAgentRows(new Workspace(home, name))))
  }
  return out
}
