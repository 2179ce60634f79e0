/**
 * `holdfast agents <ws>`: every agent of a workspace with steps, its parent when it is a split of
 * another (the claude-code plugin's `.sub-<id>`, `.aux`, `.s-<id>`), first and last step time,
 * models, token and dollar totals, and what the hold saved; with a remote, how far each was pushed,
 * and teammates' agents fetched from it (`holdfast remote fetch`). Read from git, the journal and
 * `remote/push.json`; no server needed.
 */
import type { Command } from 'commander'
import { resolveHome } from '../proxy/store/home'
import { listSteps, readStepMeta } from '../proxy/record/read'
import type { Workspace } from '../proxy/store/workspace'
import { readPushState } from '../proxy/remote/state'
import { TeammateWorkspace, teammates, thisMachine } from '../proxy/remote/teammates'
import { agentsOf, existingWorkspace } from './lookup'
import { fmtInt, fmtUsd, printJson, table } from './output'

export interface AgentRow {
  agent: string
  /** A teammate's machine, for an agent fetched from the remote (`holdfast remote fetch`); null for this machine's. */
  machine: string | null
  /** This machine's agents: the last step the remote holds (`remote/push.json`); null when never pushed. */
  pushed: number | null
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

async function agentRow(ws: Workspace, agent: string, machine: string | null): Promise<AgentRow> {
  const row: AgentRow = {
    agent,
    machine,
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
  for (const s of await listSteps(ws, agent)) {
    const m = await readStepMeta(ws, agent, s.n)
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

/** This machine's agents, then each teammate machine's fetched from the remote (`holdfast remote fetch`). */
export async function agentRows(home: string, wsName: string): Promise<AgentRow[]> {
  const ws = await existingWorkspace(home, wsName)
  const pushed = readPushState(home, ws.name)?.agents ?? {}
  const rows: AgentRow[] = []
  for (const agent of await agentsOf(ws)) {
    rows.push({ ...(await agentRow(ws, agent, null)), pushed: pushed[agent]?.step ?? null })
  }
  for (const [machine, agents] of await teammates(ws, thisMachine(home))) {
    const view = new TeammateWorkspace(home, ws.name, machine)
    for (const agent of agents) rows.push(await agentRow(view, agent, machine))
  }
  return rows.filter((r) => r.steps > 0)
}

const time = (t: string | null): string | null => (t ? t.replace('T', ' ').slice(0, 19) : null)

export function registerAgents(program: Command): void {
  program
    .command('agents')
    .description(
      'list the agents of a workspace: splits and their parents, models, totals, what the hold saved',
    )
    .argument('<ws>', 'workspace')
    .option('--home <dir>', 'holdfast home (default $HOLDFAST_HOME, then ~/.holdfast)')
    .option('--json', 'print JSON')
    .action(async (wsName: string, opts: { home?: string; json?: boolean }) => {
      const rows = await agentRows(resolveHome(opts.home), wsName)
      if (opts.json) return printJson(rows)
      if (rows.length === 0) {
        process.stdout.write(`no agent of ${wsName} has steps yet\n`)
        return
      }
      // The machine and pushed columns appear once there is a remote to speak of.
      const machines = rows.some((r) => r.machine !== null)
      const pushes = readPushState(resolveHome(opts.home), wsName) !== undefined
      const extra = (r: AgentRow): (string | number | null)[] => [
        ...(machines ? [r.machine ?? 'this'] : []),
        ...(pushes ? [r.machine === null ? (r.pushed ?? 'none') : null] : []),
      ]
      process.stdout.write(
        table(
          [
            'agent',
            ...(machines ? ['machine'] : []),
            ...(pushes ? ['pushed'] : []),
            'parent',
            'kind',
            'steps',
            'first',
            'last',
            'models',
            'input',
            'cache read',
            'cache write',
            'output',
            'cost',
            'held',
            'writes avoided',
            'saved',
          ],
          rows.map((r) => [
            r.agent,
            ...extra(r),
            r.parent,
            r.kind,
            r.steps,
            time(r.first),
            time(r.last),
            r.models.join(',') || null,
            fmtInt(r.input),
            fmtInt(r.cache_read),
            fmtInt(r.cache_write),
            fmtInt(r.output),
            r.unpriced > 0 ? `${fmtUsd(r.cost_usd)} + ${r.unpriced} unknown` : fmtUsd(r.cost_usd),
            r.held_steps,
            fmtInt(r.writes_avoided_tokens),
            fmtUsd(r.saved_usd),
          ]),
        ),
      )
    })
}
