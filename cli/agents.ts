/**
 * `holdfast agents <ws>`: every agent of a workspace with steps, its parent when it is a split of
 * another (the claude-code plugin's `.sub-<id>`, `.aux`, `.s-<id>`), first and last step time,
 * models, token and dollar totals, and what the hold saved. The rows are proxy/report/agents
 * (the view's pages show the same); this prints them.
 */
import type { Command } from 'commander'
import { resolveHome } from '../proxy/store/home'
import { agentRows as rowsOf, type AgentRow } from '../proxy/report/agents'
import { readPushState } from '../proxy/remote/state'
import { asCliError } from './lookup'
import { fmtInt, fmtUsd, printJson, table } from './output'

export { splitOf, type AgentRow } from '../proxy/report/agents'

/** The rows `holdfast agents` prints (proxy/report/agents); a refusal is the CLI's one-line error. */
export function agentRows(home: string, wsName: string): Promise<AgentRow[]> {
  return rowsOf(home, wsName).catch(asCliError)
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
      const home = resolveHome(opts.home)
      const rows = await agentRows(home, wsName)
      if (opts.json) return printJson(rows)
      if (rows.length === 0) {
        process.stdout.write(`no agent of ${wsName} has steps yet\n`)
        return
      }
      // The machine and pushed columns appear once there is a remote to speak of.
      const machines = rows.some((r) => (r.machine ?? null) !== null)
      const pushes = readPushState(home, wsName) !== undefined
      const extra = (r: AgentRow): (string | number | null)[] => [
        ...(machines ? [r.machine ?? 'this'] : []),
        ...(pushes ? [(r.machine ?? null) === null ? (r.pushed ?? 'none') : null] : []),
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
