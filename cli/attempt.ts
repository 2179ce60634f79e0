/**
 * `holdfast attempt <ws> --from <notch> --goal <text> --role <r>…`: fire a cohort (one attempt
 * per role) and show each attempt's progress live on stderr; the child ids go to stdout.
 */
import type { Command } from 'commander'
import { type AttemptEvent, externalNotice, fireCohort } from '../proxy/attempts/fire'
import { DispatchRefused } from '../proxy/attempts/dispatch'
import { formatStep } from '../proxy/core/naming'
import { loadConfig } from '../proxy/store/config'
import { resolveHome } from '../proxy/store/home'
import { readStepMeta } from '../proxy/record/read'
import { Workspace } from '../proxy/store/workspace'
import { CliError, fmtInt, fmtMs, fmtUsd } from './output'

const collect = (value: string, previous: string[] = []): string[] => [...previous, value]

/** The child's first step once its meta is complete (finish writes it just after the answer ends). */
async function finished(ws: Workspace, child: string): Promise<string> {
  for (let i = 0; i < 50; i++) {
    const m = await readStepMeta(ws, child, 1).catch(() => undefined)
    if (m?.ended_at) {
      const u = m.usage
      return `done: step ${formatStep(1)} ${m.route.model ?? ''}, input ${fmtInt(u?.input_tokens)}, cache read ${fmtInt(u?.cache_read_tokens)}, output ${fmtInt(u?.output_tokens)}, ${fmtUsd(m.cost?.usd)}, ${fmtMs(m.total_ms)}`
    }
    await new Promise((r) => setTimeout(r, 40))
  }
  return 'done'
}

export function registerAttempt(program: Command): void {
  program
    .command('attempt')
    .description('fire attempts from a recorded step: one per --role, compared with `holdfast cohort`')
    .argument('<ws>', 'workspace')
    .requiredOption('--from <notch>', '<agent>@<NNN>, agents/<agent>, a commit, or config/<name>')
    .requiredOption('--goal <text>', 'what the attempts are for (the new user turn, verbatim)')
    .requiredOption('--role <role>', 'a role for one attempt (repeatable)', collect)
    .option('--skill <name>', 'pin <home>/skills/<name>/SKILL.md into each attempt (repeatable)', collect)
    .option('--parent <agent>', 'the dispatching agent (default: the agent whose branch holds the notch)')
    .option('--home <dir>', 'holdfast home (default $HOLDFAST_HOME, then ~/.holdfast)')
    .action(
      async (
        wsName: string,
        o: { from: string; goal: string; role: string[]; skill?: string[]; parent?: string; home?: string },
      ) => {
        const home = resolveHome(o.home)
        const config = loadConfig(home)
        const ws = new Workspace(home, wsName)
        const pending: Promise<void>[] = []
        const say = (role: string, text: string): void =>
          void process.stderr.write(`${role.padEnd(14)} ${text}\n`)
        const onEvent = (e: AttemptEvent): void => {
          if (e.state === 'refused') say(e.role, `refused: ${e.message}`)
          else if (e.state === 'external')
            say(e.role, `dispatched by ${config.dispatcher?.command[0] ?? '?'} (exit ${e.exit})`)
          else if (e.state === 'waiting') say(e.role, `${e.child}: waiting`)
          else if (e.state === 'streaming')
            say(e.role, `${e.child}: streaming (first byte after ${fmtMs(e.ttfbMs)})`)
          else if (e.state === 'failed')
            say(e.role, `${e.child}: failed${e.status ? ` (${e.status})` : ''}: ${e.message}`)
          else if (e.state === 'done')
            pending.push(finished(ws, e.child).then((line) => say(e.role, `${e.child}: ${line}`)))
        }
        process.stderr.write(externalNotice(config) ?? '')
        const results = await fireCohort(
          home,
          config,
          {
            ws: wsName,
            from: o.from,
            goal: o.goal,
            roles: o.role,
            skills: o.skill ?? [],
            ...(o.parent ? { parent: o.parent } : {}),
          },
          'cli',
          onEvent,
        ).catch((err: Error) => {
          if (err instanceof DispatchRefused || /--from/.test(err.message)) throw new CliError(err.message)
          throw err
        })
        await Promise.all(pending)
        for (const r of results) if (r.child) process.stdout.write(`${r.child}\n`)
        const failed = results.filter((r) => r.exit !== 0).length
        if (failed === results.length)
          throw new CliError(`no attempt succeeded (${failed} of ${results.length} refused or failed)`)
      },
    )
}
