/**
 * `holdfast why <ws> <agent> <NNN>`: what moved in the cached prefix between a step and the one
 * before (the first difference with an excerpt of both sides), a compaction, whether the hold
 * applied and which tools it held, and the provider's own cache counters. The report is
 * proxy/report/why (the view's step page shows the same); this prints it.
 */
import type { Command } from 'commander'
import { resolveHome } from '../proxy/store/home'
import { why as whyOf, type WhyReport } from '../proxy/report/why'
import { asCliError } from './lookup'
import { printJson } from './output'
import { shownChanges } from '../proxy/core/why-words'

export { otherConversation, type WhyReport } from '../proxy/report/why'

/** The report `holdfast why` prints; a refusal is the CLI's one-line error. */
export function why(
  home: string,
  ws: string,
  agent: string,
  step: string,
  machine?: string,
): Promise<WhyReport> {
  return whyOf(home, ws, agent, step, machine).catch(asCliError)
}

export function registerWhy(program: Command): void {
  program
    .command('why')
    .description(
      'explain a step: what moved in the cached prefix, whether the hold applied, the cache counters',
    )
    .argument('<ws>', 'workspace')
    .argument('<agent>', 'agent')
    .argument('<NNN>', 'step number')
    .option('--machine <machine>', "a teammate's agent, fetched by `holdfast remote fetch`")
    .option('--home <dir>', 'holdfast home (default $HOLDFAST_HOME, then ~/.holdfast)')
    .option('--json', 'print JSON')
    .action(
      async (
        wsName: string,
        agent: string,
        step: string,
        opts: { home?: string; json?: boolean; machine?: string },
      ) => {
        const report = await why(resolveHome(opts.home), wsName, agent, step, opts.machine)
        if (opts.json) return printJson(report)
        process.stdout.write(`step ${report.step} of ${wsName}/${agent}\n`)
        for (const line of [...report.cause_lines, ...report.summary]) process.stdout.write(`  ${line}\n`)
        for (const c of shownChanges(report.changes)) process.stdout.write(`  changed ${c.field}: ${c.why}\n`)
      },
    )
}
