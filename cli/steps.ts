/**
 * `holdfast steps <ws> <agent>`: one row per step (tokens, cache reads and writes, cost, what
 * the hold saved, a compaction, timings, committed or pending; with keep-warm pings, their count and
 * what they saved on the step they kept warm, and a sentence of their totals). The rows are proxy/report/steps
 * (the view's timeline shows the same); this prints them.
 */
import { HOLD_SAVED, PINGS, WARM_SAVED, warmSentence } from '../proxy/core/saving-words'
import { keepWarmTotals } from '../proxy/report/pings'
import type { Command } from 'commander'
import { resolveHome } from '../proxy/store/home'
import { costUnknown, stepRows as rowsOf, type StepRow, totals } from '../proxy/report/steps'
import { asCliError } from './lookup'
import { fmtInt, fmtMs, fmtUsd, printJson, table } from './output'

export { totals, type StepRow } from '../proxy/report/steps'

/** The rows `holdfast steps` prints (proxy/report/steps); a refusal is the CLI's one-line error. */
export function stepRows(home: string, wsName: string, agent: string, machine?: string): Promise<StepRow[]> {
  return rowsOf(home, wsName, agent, machine).catch(asCliError)
}

/** The held cell: the dropped tools (the first two, then how many more), `reordered` for a pure reorder. */
export function heldCell(r: Pick<StepRow, 'held' | 'hold_reason'> & { reordered?: boolean }): string {
  if (r.held.length === 0) return r.reordered ? 'reordered' : '-'
  const more = r.held.length > 2 ? ` +${r.held.length - 2}` : ''
  return r.held.slice(0, 2).join(',') + more
}

/** The pings cell: `of 003` on a ping (a step of `.aux`), the count on the step its pings kept warm. */
export function pingsCell(r: Pick<StepRow, 'ping_of' | 'keep_warm'>): string {
  if (r.ping_of) return `of ${r.ping_of}`
  return r.keep_warm ? String(r.keep_warm.pings) : '-'
}

/** The cost cell: unknown (never $0) when the step has usage but no table priced its model. */
export function costCell(usd: number | null, input: number | null): string {
  return costUnknown({ cost_usd: usd, input }) ? 'unknown' : fmtUsd(usd)
}

export function registerSteps(program: Command): void {
  program
    .command('steps')
    .description("list an agent's steps: tokens, cache reads/writes, cost, what the hold saved, timings")
    .argument('<ws>', 'workspace')
    .argument('<agent>', 'agent')
    .option('--machine <machine>', "a teammate's agent, fetched by `holdfast remote fetch`")
    .option('--home <dir>', 'holdfast home (default $HOLDFAST_HOME, then ~/.holdfast)')
    .option('--json', 'print JSON')
    .action(
      async (wsName: string, agent: string, opts: { home?: string; json?: boolean; machine?: string }) => {
        const rows = await stepRows(resolveHome(opts.home), wsName, agent, opts.machine)
        if (opts.json) return printJson(rows)
        if (rows.length === 0) {
          process.stdout.write(`no steps recorded for ${wsName}/${agent}\n`)
          return
        }
        const t = totals(rows)
        const header = [
          'NNN',
          'time',
          'model',
          'status',
          'held',
          'compaction',
          'input',
          'cache read',
          'cache write',
          'output',
          'cost',
          HOLD_SAVED,
          'ttfb',
          'total',
          'state',
        ]
        const body: (string | number | null)[][] = rows
          .map((r): (string | number | null)[] => [
            r.step,
            r.time ? r.time.replace('T', ' ').slice(0, 19) : null,
            r.model,
            r.status ?? r.outcome,
            heldCell(r),
            r.compaction ?? '-',
            fmtInt(r.input),
            fmtInt(r.cache_read),
            fmtInt(r.cache_write),
            fmtInt(r.output),
            costCell(r.cost_usd, r.input),
            fmtUsd(r.saved_usd),
            fmtMs(r.ttfb_ms),
            fmtMs(r.total_ms),
            r.state,
          ])
          .concat([
            [
              'total',
              null,
              `${rows.length} step${rows.length === 1 ? '' : 's'}`,
              null,
              null,
              null,
              fmtInt(t.input),
              fmtInt(t.cache_read),
              fmtInt(t.cache_write),
              fmtInt(t.output),
              t.unpriced > 0 ? `${fmtUsd(t.cost_usd)} + ${t.unpriced} unknown` : fmtUsd(t.cost_usd),
              fmtUsd(t.saved_usd),
              null,
              null,
              null,
            ],
          ])
        // Keep-warm columns, after the hold's, only where there were pings.
        const warm = keepWarmTotals(rows.flatMap((r) => (r.keep_warm ? [r.keep_warm] : [])))
        if (warm || rows.some((r) => r.ping_of)) {
          header.splice(12, 0, PINGS, WARM_SAVED)
          rows.forEach((r, i) =>
            body[i]!.splice(
              12,
              0,
              pingsCell(r),
              r.keep_warm
                ? r.keep_warm.saved_usd === null
                  ? 'unknown'
                  : fmtUsd(r.keep_warm.saved_usd)
                : '-',
            ),
          )
          body[rows.length]!.splice(12, 0, warm?.pings ?? null, warm ? fmtUsd(warm.saved_usd) : null)
        }
        process.stdout.write(table(header, body))
        if (warm)
          process.stdout.write(
            `${warmSentence(warm.pings, warm.cost_usd, warm.saved_tokens, warm.unpriced_savings > 0 ? null : warm.saved_usd)} (the pings are steps of ${agent}.aux)\n`,
          )
        // A number given out whose record was lost is shown, with where its bytes went.
        for (const r of rows) if (r.note) process.stdout.write(`step ${r.step} is missing: ${r.note}\n`)
      },
    )
}
