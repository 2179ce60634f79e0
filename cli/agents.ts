/**
 * `holdfast agents <ws>`: every agent of a workspace with steps, its parent when it is a split of
 * another (the claude-code plugin's `.sub-<id>`, `.aux`, `.s-<id>`), first and last step time,
 * models, token and dollar totals, what the hold saved (proxy/core/saving-words), and, where an
 * agent was kept warm, its pings, what they cost and what they saved. The rows are
 * proxy/report/agents (the view's pages show the same); this prints them, in 100 columns unless
 * `--wide`.
 */
import type { Command } from 'commander'
import { resolveHome } from '../proxy/store/home'
import { agentRows as rowsOf, type AgentRow } from '../proxy/report/agents'
import { readPushState } from '../proxy/remote/state'
import { asCliError } from './lookup'
import { HOLD_SAVED, PINGS, PINGS_COST, WARM_SAVED, WRITES_AVOIDED } from '../proxy/core/saving-words'
import { fmtInt, fmtUsd, printJson, table } from './output'

export { splitOf, type AgentRow } from '../proxy/report/agents'

/** The rows `holdfast agents` prints (proxy/report/agents); a refusal is the CLI's one-line error. */
export function agentRows(home: string, wsName: string): Promise<AgentRow[]> {
  return rowsOf(home, wsName).catch(asCliError)
}

const time = (t: string | null): string | null => (t ? t.replace('T', ' ').slice(0, 19) : null)
/** `12-07 23:06`: the default table's last step, short enough to fit. */
const shortTime = (t: string | null): string | null => (t ? t.replace('T', ' ').slice(5, 16) : null)

export function registerAgents(program: Command): void {
  program
    .command('agents')
    .description(
      'list the agents of a workspace: splits and their parents, models, totals, what the hold saved',
    )
    .argument('<ws>', 'workspace')
    .option('--home <dir>', 'holdfast home (default $HOLDFAST_HOME, then ~/.holdfast)')
    .option('--json', 'print JSON')
    .option('--wide', 'every column (parent, first step, models, token totals); the default fits 100 columns')
    .action(async (wsName: string, opts: { home?: string; json?: boolean; wide?: boolean }) => {
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
      const cost = (r: AgentRow): string =>
        r.unpriced > 0 ? `${fmtUsd(r.cost_usd)} + ${r.unpriced} unknown` : fmtUsd(r.cost_usd)
      // Every column with --wide; by default the ones that fit 100 columns (the saving included).
      type Column = readonly [name: string, cell: (r: AgentRow) => string | number | null, wide?: 'wide']
      const all: Column[] = [
        ['agent', (r) => r.agent],
        ...(machines ? [['machine', (r: AgentRow) => r.machine ?? 'this'] as const] : []),
        ...(pushes
          ? [
              [
                'pushed',
                (r: AgentRow) => ((r.machine ?? null) === null ? (r.pushed ?? 'none') : null),
              ] as const,
            ]
          : []),
        ['parent', (r) => r.parent, 'wide'],
        ['kind', (r) => r.kind],
        ['steps', (r) => r.steps],
        ['first', (r) => time(r.first), 'wide'],
        ['last', (r) => (opts.wide ? time(r.last) : shortTime(r.last))],
        ['models', (r) => r.models.join(',') || null, 'wide'],
        ['input', (r) => fmtInt(r.input), 'wide'],
        ['cache read', (r) => fmtInt(r.cache_read), 'wide'],
        ['cache write', (r) => fmtInt(r.cache_write), 'wide'],
        ['output', (r) => fmtInt(r.output), 'wide'],
        ['cost', cost],
        ['held', (r) => r.held_steps],
        [WRITES_AVOIDED, (r) => fmtInt(r.writes_avoided_tokens)],
        [HOLD_SAVED, (r) => fmtUsd(r.saved_usd)],
        // Keep-warm, only where an agent was pinged: on the agent the pings kept warm.
        ...(rows.some((r) => r.keep_warm)
          ? ([
              [PINGS, (r: AgentRow) => r.keep_warm?.pings ?? null],
              [PINGS_COST, (r: AgentRow) => (r.keep_warm ? fmtUsd(r.keep_warm.cost_usd) : null)],
              [
                WARM_SAVED,
                (r: AgentRow) =>
                  r.keep_warm
                    ? `${fmtUsd(r.keep_warm.saved_usd)}${r.keep_warm.unpriced_savings > 0 ? ` + ${r.keep_warm.unpriced_savings} unknown` : ''}`
                    : null,
              ],
            ] as const)
          : []),
      ]
      const columns = opts.wide ? all : all.filter((c) => c[2] !== 'wide')
      process.stdout.write(
        table(
          columns.map(([name]) => name),
          rows.map((r) => columns.map(([, cell]) => cell(r))),
        ),
      )
    })
}
