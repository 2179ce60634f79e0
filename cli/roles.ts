/**
 * `holdfast roles [--ws W] [--at REF]`: the roles a step would resolve against, read at the
 * followed config of REF (default `config/default`), headed with what is followed.
 */
import type { Command } from 'commander'
import { loadConfig } from '../proxy/store/config'
import { resolveHome } from '../proxy/store/home'
import { rolesAt as rolesOf, type RolesReport } from '../proxy/report/roles'
import { asCliError, existingWorkspace, workspacesSentence } from './lookup'
import { printJson, table } from './output'

export type { RolesReport } from '../proxy/report/roles'

/** The roles `holdfast roles` prints (proxy/report/roles); a refusal is the CLI's one-line error. */
export async function rolesAt(home: string, wsName: string, at: string): Promise<RolesReport> {
  const ws = await existingWorkspace(home, wsName)
  return rolesOf(ws, loadConfig(home).providers, at).catch(asCliError)
}

export function registerRoles(program: Command): void {
  program
    .command('roles')
    .description('list the roles (provider, model) at the followed config of a ref')
    .option('--ws <workspace>', 'workspace (default from holdfast.yaml)')
    .option('--at <ref>', 'a commit, agents/<agent>, config/<name>…', 'config/default')
    .option('--home <dir>', 'holdfast home (default $HOLDFAST_HOME, then ~/.holdfast)')
    .option('--json', 'print JSON')
    .action(async (o: { ws?: string; at: string; home?: string; json?: boolean }) => {
      const home = resolveHome(o.home)
      const wsName = o.ws ?? loadConfig(home).defaults.workspace
      const report = await rolesAt(home, wsName, o.at)
      if (o.json) return printJson(report)
      if (o.ws === undefined) {
        process.stdout.write(
          `workspace ${wsName} (holdfast.yaml's default; ${await workspacesSentence(home)})\n`,
        )
      }
      process.stdout.write(`${report.heading}\n`)
      for (const line of report.remote) process.stdout.write(`${line}\n`)
      if (report.roles.length === 0) {
        process.stdout.write('no roles declared\n')
        return
      }
      process.stdout.write(
        table(
          ['role', 'provider', 'model', 'max output', 'note'],
          report.roles.map((r) => [
            r.role,
            r.provider,
            r.model,
            r.max_output_tokens,
            r.row_declared ? '' : 'row missing from holdfast.yaml',
          ]),
        ),
      )
    })
}
