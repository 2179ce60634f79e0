/**
 * `holdfast cohort <ws> <notch>`: the attempts hanging on a notch, side by side, derived from the
 * refs (no registry): child, role, model, stop reason, tokens, cost, latency, the answer's first line.
 * The rows are proxy/report/cohort (the view's cohort page shows the same); this prints them.
 */
import type { Command } from 'commander'
import { cohortReport } from '../proxy/report/cohort'
import { resolveHome } from '../proxy/store/home'
import { asCliError, existingWorkspace } from './lookup'
import { fmtInt, fmtMs, fmtUsd, printJson, table } from './output'

/** Answers side by side, each wrapped to its column. */
export function columns(
  cols: { head: string; body: string }[],
  width = process.stdout.columns || 160,
): string {
  const w = Math.max(20, Math.floor((width - 3 * (cols.length - 1)) / Math.max(1, cols.length)))
  const wrap = (text: string): string[] =>
    text.split('\n').flatMap((line) => {
      const out: string[] = []
      let rest = line
      while (rest.length > w) {
        const cut = rest.lastIndexOf(' ', w) > w / 2 ? rest.lastIndexOf(' ', w) : w
        out.push(rest.slice(0, cut))
        rest = rest.slice(cut).trimStart()
      }
      out.push(rest)
      return out
    })
  const blocks = cols.map((c) => [
    c.head.slice(0, w),
    '─'.repeat(Math.min(w, Math.max(c.head.length, 3))),
    ...wrap(c.body),
  ])
  const height = Math.max(...blocks.map((b) => b.length))
  const lines: string[] = []
  for (let i = 0; i < height; i++)
    lines.push(
      blocks
        .map((b) => (b[i] ?? '').padEnd(w))
        .join(' │ ')
        .trimEnd(),
    )
  return lines.join('\n') + '\n'
}

export function registerCohort(program: Command): void {
  program
    .command('cohort')
    .description('show the attempts fired from one notch, side by side')
    .argument('<ws>', 'workspace')
    .argument('<notch>', '<agent>@<NNN>, a commit, agents/<agent> or config/<name>')
    .option('--full', 'print each answer in full')
    .option('--json', 'print JSON')
    .option('--home <dir>', 'holdfast home (default $HOLDFAST_HOME, then ~/.holdfast)')
    .action(
      async (wsName: string, notchRef: string, o: { full?: boolean; json?: boolean; home?: string }) => {
        const ws = await existingWorkspace(resolveHome(o.home), wsName)
        const { notch, members } = await cohortReport(ws, notchRef).catch(asCliError)
        if (o.json) {
          // eslint-disable-next-line @typescript-eslint/no-unused-vars
          return printJson({ notch, members: members.map(({ outcome, ...printed }) => printed) })
        }
        process.stdout.write(
          `cohort of ${notchRef} (${notch.slice(0, 8)}): ${members.length} attempt${members.length === 1 ? '' : 's'}\n`,
        )
        if (members.length === 0) return
        process.stdout.write(
          table(
            [
              'child',
              'role',
              'model',
              'stop',
              'input',
              'cache read',
              'cache write',
              'output',
              'cost',
              'latency',
              'answer',
            ],
            members.map((m) => [
              m.child,
              m.role,
              m.model,
              m.stop_reason ?? m.outcome ?? 'pending',
              fmtInt(m.usage?.input_tokens),
              fmtInt(m.usage?.cache_read_tokens),
              fmtInt(m.usage?.cache_write_tokens),
              fmtInt(m.usage?.output_tokens),
              fmtUsd(m.cost_usd),
              fmtMs(m.total_ms),
              (m.answer ?? '').split('\n')[0]?.slice(0, 60),
            ]),
          ),
        )
        if (o.full)
          process.stdout.write(
            '\n' +
              columns(
                members.map((m) => ({
                  head: `${m.role} · ${m.model ?? '?'}`,
                  body: m.answer ?? '(no answer)',
                })),
              ),
          )
      },
    )
}
