/**
 * `holdfast steps <ws> <agent>`: one row per step (tokens, cache reads and writes, cost, what
 * the hold saved, timings, committed or pending), read from git and the journal; no server needed.
 */
import type { Command } from 'commander'
import { formatStep } from '../proxy/core/naming'
import { resolveHome } from '../proxy/store/home'
import { listSteps, readStepMeta } from '../proxy/record/read'
import { readServeInfo } from '../proxy/store/serve-lock'
import { existingAgent, readableWorkspace } from './lookup'
import { fmtInt, fmtMs, fmtUsd, printJson, table } from './output'

export interface StepRow {
  step: string
  time: string | null
  model: string | null
  status: number | null
  outcome: string | null
  held: string[]
  hold_reason: string | null
  input: number | null
  cache_read: number | null
  cache_write: number | null
  output: number | null
  cost_usd: number | null
  saved_usd: number | null
  ttfb_ms: number | null
  total_ms: number | null
  state: 'committed' | 'pending'
}

export async function stepRows(
  home: string,
  wsName: string,
  agent: string,
  machine?: string,
): Promise<StepRow[]> {
  const ws = await readableWorkspace(home, wsName, machine)
  await existingAgent(ws, agent)
  const rows: StepRow[] = []
  // An unfinished step is in flight only while a server runs; otherwise it was cut off, and the
  // next start records it as interrupted.
  const unfinished = readServeInfo(home) ? 'in flight' : 'interrupted'
  for (const s of await listSteps(ws, agent)) {
    const m = await readStepMeta(ws, agent, s.n)
    rows.push({
      step: formatStep(s.n),
      time: m?.started_at ?? null,
      model: m?.route.model ?? null,
      status: m?.status ?? null,
      outcome: m?.outcome ?? (m ? unfinished : null),
      held: m?.hold.applied ? m.hold.held : [],
      hold_reason: m?.hold.reason ?? null,
      input: m?.usage?.input_tokens ?? null,
      cache_read: m?.usage?.cache_read_tokens ?? null,
      cache_write: m?.usage?.cache_write_tokens ?? null,
      output: m?.usage?.output_tokens ?? null,
      cost_usd: m?.cost?.usd ?? null,
      saved_usd: m?.cost?.saved_by_hold_usd ?? null,
      ttfb_ms: m?.ttfb_ms ?? null,
      total_ms: m?.total_ms ?? null,
      state: s.committed ? 'committed' : 'pending',
    })
  }
  return rows
}

/** The cost cell: unknown (never $0) when the step has usage but no table priced its model. */
export function costCell(usd: number | null, input: number | null): string {
  return usd === null && input !== null ? 'unknown' : fmtUsd(usd)
}

/** Sums of the rows' token and dollar columns; a cost is unknown when any priced step's is. */
export function totals(rows: readonly StepRow[]): {
  input: number
  cache_read: number
  cache_write: number
  output: number
  cost_usd: number
  saved_usd: number
  unpriced: number
} {
  const t = { input: 0, cache_read: 0, cache_write: 0, output: 0, cost_usd: 0, saved_usd: 0, unpriced: 0 }
  for (const r of rows) {
    t.input += r.input ?? 0
    t.cache_read += r.cache_read ?? 0
    t.cache_write += r.cache_write ?? 0
    t.output += r.output ?? 0
    t.cost_usd += r.cost_usd ?? 0
    t.saved_usd += r.saved_usd ?? 0
    if (r.cost_usd === null && r.input !== null) t.unpriced++
  }
  return t
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
        process.stdout.write(
          table(
            [
              'NNN',
              'time',
              'model',
              'status',
              'held',
              'input',
              'cache read',
              'cache write',
              'output',
              'cost',
              'saved',
              'ttfb',
              'total',
              'state',
            ],
            rows
              .map((r) => [
                r.step,
                r.time ? r.time.replace('T', ' ').slice(0, 19) : null,
                r.model,
                r.status ?? r.outcome,
                r.held.length ? r.held.join(',') : '-',
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
              ]),
          ),
        )
      },
    )
}
