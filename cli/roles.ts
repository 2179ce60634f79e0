/**
 * `holdfast roles [--ws W] [--at REF]`: the roles a step would resolve against, read at the
 * followed config of REF (default `config/default`), headed with what is followed.
 */
import type { Command } from 'commander'
import { loadConfig } from '../proxy/store/config'
import { ConfigReader } from '../proxy/store/config-lineage'
import { resolveRevision } from '../proxy/store/git'
import { resolveHome } from '../proxy/store/home'
import { pullRefusals, readPullReport } from '../proxy/remote/state'
import { existingWorkspace, workspacesSentence } from './lookup'
import { CliError, printJson, table } from './output'

export interface RolesReport {
  at: string
  commit: string
  heading: string
  /** Config lineages of the remote named holdfast that this workspace did not follow, and why (remote/config.json). */
  remote: string[]
  roles: {
    role: string
    provider: string
    model: string
    max_output_tokens: number | null
    row_declared: boolean
  }[]
}

export async function rolesAt(home: string, wsName: string, at: string): Promise<RolesReport> {
  const ws = await existingWorkspace(home, wsName)
  const rows = loadConfig(home).providers
  const rev = await resolveRevision(ws.repo, at).catch((err: Error) => {
    throw new CliError(`--at ${at}: ${err.message}`)
  })
  if (!rev) throw new CliError(`--at ${at}: no such commit or ref in workspace "${wsName}"`)
  const resolved = await new ConfigReader(ws.repo).resolve(rev, () => Promise.resolve(rev))
  if (!resolved.ok) throw new CliError(`roles at ${at}: ${resolved.message}`)
  const f = resolved.followed
  if (!resolved.roles.ok) throw new CliError(resolved.roles.error)
  const heading =
    f.kind === 'tip'
      ? `follows ${f.ref.replace('refs/heads/', '')} at ${f.commit.slice(0, 8)}`
      : `held at ${f.commit.slice(0, 8)}: ${f.diverged.length} diverged lineages (${f.diverged.map((r) => r.replace('refs/heads/', '')).join(', ')})`
  const roles = Object.entries(resolved.roles.value.roles)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([role, r]) => ({
      role,
      provider: r.provider,
      model: r.model,
      max_output_tokens: r.max_output_tokens ?? null,
      row_declared: Object.hasOwn(rows, r.provider),
    }))
  return { at, commit: f.commit, heading, remote: pullRefusals(readPullReport(home, ws.name)), roles }
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
