/**
 * `holdfast config set-role|remove-role|show <ws>`: edit and read `providers.yaml` on a config
 * lineage without a worktree, validated in-process exactly as the git hook validates.
 * Invariant: an edit that does not validate commits nothing; a running proxy follows an edit
 * from its next step (it reads the config refs at every step).
 */
import type { Command } from 'commander'
import { assertName } from '../proxy/core/naming'
import { loadConfig } from '../proxy/store/config'
import { readLineage, removeRole, setRole } from '../proxy/store/config/edit'
import { DEFAULT_LINEAGE, resolveHome } from '../proxy/store/home'
import { renderProviders } from '../proxy/store/config/providers'
import { hookPreparer } from '../proxy/store/hook-install'
import { Workspace } from '../proxy/store/workspace'
import { workspacesSentence } from './lookup'
import { CliError, printJson } from './output'

async function workspace(home: string, name: string, create: boolean): Promise<Workspace> {
  const ws = new Workspace(home, assertName('workspace', name), { prepare: hookPreparer() })
  if (ws.exists()) return ws
  if (!create) {
    throw new CliError(
      `no workspace "${name}" in ${home} (--create makes it); ${await workspacesSentence(home)}`,
    )
  }
  await ws.ensure()
  return ws
}

function positiveInt(value: string): number {
  const n = Number(value)
  if (!Number.isInteger(n) || n < 1)
    throw new CliError(`--max-output-tokens ${value} is not a positive integer`)
  return n
}

export function registerConfig(program: Command): void {
  const config = program
    .command('config')
    .description("edit and show a workspace's providers.yaml (roles) on a config lineage")
  config
    .command('set-role')
    .description('declare or change a role: a provider row of holdfast.yaml and a model')
    .argument('<ws>', 'workspace')
    .argument('<role>', 'role name')
    .requiredOption('--provider <row>', 'provider row declared in holdfast.yaml')
    .requiredOption('--model <id>', 'model id sent to that provider')
    .option(
      '--max-output-tokens <n>',
      "fills the dialect's max-tokens field when the client sent none",
      positiveInt,
    )
    .option('--lineage <name>', 'config lineage (refs/heads/config/<name>)', DEFAULT_LINEAGE)
    .option('--create', 'create the workspace when it does not exist')
    .option('--home <dir>', 'holdfast home (default $HOLDFAST_HOME, then ~/.holdfast)')
    .action(
      async (
        wsName: string,
        role: string,
        o: {
          provider: string
          model: string
          maxOutputTokens?: number
          lineage: string
          create?: boolean
          home?: string
        },
      ) => {
        const home = resolveHome(o.home)
        const ws = await workspace(home, wsName, o.create === true)
        const rows = loadConfig(home).providers
        const oid = await setRole(
          ws.repo,
          o.lineage,
          role,
          {
            provider: o.provider,
            model: o.model,
            ...(o.maxOutputTokens !== undefined ? { max_output_tokens: o.maxOutputTokens } : {}),
          },
          rows,
        ).catch((err: Error) => {
          throw new CliError(err.message)
        })
        process.stdout.write(
          `config/${o.lineage} at ${oid.slice(0, 8)}: role ${role} → ${o.provider}/${o.model}\n`,
        )
      },
    )
  config
    .command('remove-role')
    .description('remove a role')
    .argument('<ws>', 'workspace')
    .argument('<role>', 'role name')
    .option('--lineage <name>', 'config lineage (refs/heads/config/<name>)', DEFAULT_LINEAGE)
    .option('--home <dir>', 'holdfast home (default $HOLDFAST_HOME, then ~/.holdfast)')
    .action(async (wsName: string, role: string, o: { lineage: string; home?: string }) => {
      const home = resolveHome(o.home)
      const ws = await workspace(home, wsName, false)
      const oid = await removeRole(ws.repo, o.lineage, role, loadConfig(home).providers).catch(
        (err: Error) => {
          throw new CliError(err.message)
        },
      )
      process.stdout.write(`config/${o.lineage} at ${oid.slice(0, 8)}: role ${role} removed\n`)
    })
  config
    .command('show')
    .description("print a lineage's providers.yaml")
    .argument('<ws>', 'workspace')
    .option('--lineage <name>', 'config lineage (refs/heads/config/<name>)', DEFAULT_LINEAGE)
    .option('--home <dir>', 'holdfast home (default $HOLDFAST_HOME, then ~/.holdfast)')
    .option('--json', 'print JSON')
    .action(async (wsName: string, o: { lineage: string; home?: string; json?: boolean }) => {
      const home = resolveHome(o.home)
      const ws = await workspace(home, wsName, false)
      const { tip, config: c } = await readLineage(ws.repo, o.lineage).catch((err: Error) => {
        throw new CliError(err.message)
      })
      if (o.json) return printJson({ lineage: o.lineage, commit: tip, ...c })
      process.stdout.write(`# config/${o.lineage} at ${tip.slice(0, 8)}\n${renderProviders(c)}`)
    })
}
