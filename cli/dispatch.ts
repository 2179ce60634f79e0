/**
 * `holdfast dispatch <role> <ws> <parent> --goal <text> --from <ref> [--pin <dest>=<src>]…`: the
 * built-in dispatcher (argv compatible with `litany dispatch`; `<ws>` is a workspace name where
 * litany takes a path). Prints the child id; every dispatch is a row in `<home>/ops.jsonl`.
 */
import type { Command } from 'commander'
import { dispatchOne, externalNotice } from '../proxy/attempts/fire'
import { loadConfig } from '../proxy/store/config'
import { resolveHome } from '../proxy/store/home'
import { CliError } from './output'

const collect = (value: string, previous: string[] = []): string[] => [...previous, value]

export function registerDispatch(program: Command): void {
  program
    .command('dispatch')
    .description(
      "fork an agent's conversation from a ref into a new agent with a role and a goal (one attempt)",
    )
    .argument('<role>', 'role declared at the followed config of the fork point')
    .argument('<ws>', 'workspace')
    .argument('<parent>', 'the agent the attempt is dispatched from')
    .requiredOption('--goal <text>', 'the new user turn, verbatim')
    .requiredOption(
      '--from <ref>',
      'a notch: <agent>@<NNN>, agents/<agent>, a commit, or config/<name> for a clean start',
    )
    .option('--pin <dest=src>', 'copy a file into the child at dest (repeatable, in order)', collect)
    .option('--home <dir>', 'holdfast home (default $HOLDFAST_HOME, then ~/.holdfast)')
    .action(
      async (
        role: string,
        ws: string,
        parent: string,
        o: { goal: string; from: string; pin?: string[]; home?: string },
      ) => {
        const home = resolveHome(o.home)
        const config = loadConfig(home)
        const pins = (o.pin ?? []).map((spec) => {
          const eq = spec.indexOf('=')
          if (eq <= 0 || eq === spec.length - 1) throw new CliError(`--pin "${spec}" is not <dest>=<src>`)
          return { dest: spec.slice(0, eq), src: spec.slice(eq + 1) }
        })
        process.stderr.write(externalNotice(config) ?? '')
        const r = await dispatchOne(
          home,
          config,
          { role, ws, parent, goal: o.goal, from: o.from, pins },
          'cli',
        )
        process.stdout.write(r.stdout)
        if (r.exit !== 0) throw new CliError(r.message ?? r.stderr.replace(/^holdfast: /, '').trim(), r.exit)
      },
    )
}
