/**
 * `holdfast hooks install <ws>`: install or refresh the workspace's git hook (also done at workspace
 * creation and at every `serve` start); and the hidden `holdfast hook reference-transaction <state>`
 * that hook runs. Invariant: the hidden command reads the ref lines on stdin, prints only refusals
 * (`holdfast: refusing <ref>: …`) and exits 1 only to refuse a `prepared` transaction.
 */
import fs from 'node:fs'
import type { Command } from 'commander'
import { assertName } from '../proxy/core/naming'
import { HOOK_NAME, installHooks } from '../proxy/store/hook-install'
import { homePaths, resolveHome } from '../proxy/store/home'
import { CliError } from './output'

const HOME_HELP = 'holdfast home (default $HOLDFAST_HOME, then ~/.holdfast)'

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) chunks.push(chunk)
  return Buffer.concat(chunks).toString('utf8')
}

export function registerHooks(program: Command): void {
  const hooks = program.command('hooks').description("manage the workspace repository's git hooks")
  hooks
    .command('install')
    .description(`install or refresh the ${HOOK_NAME} hook that validates config/* commits`)
    .argument('<ws>', 'workspace')
    .option('--home <dir>', HOME_HELP)
    .action(async (wsName: string, opts: { home?: string }) => {
      const home = resolveHome(opts.home)
      const ws = assertName('workspace', wsName)
      if (!fs.existsSync(homePaths.repo(home, ws))) {
        throw new CliError(
          `no workspace "${ws}" in ${home} (it is created by its first request or \`holdfast config set-role\`)`,
        )
      }
      const r = await installHooks(home, ws)
      if (!r.ok) throw new CliError(`could not install ${r.file}: ${r.error}`)
      process.stdout.write(`${r.changed ? 'installed' : 'up to date:'} ${r.file}\n`)
    })

  const hook = program.command('hook', { hidden: true }).description('run by the git hooks holdfast installs')
  hook
    .command(HOOK_NAME)
    .description('validate config/* updates (prepared); tell the running proxy (committed)')
    .argument('<state>', 'prepared, committed or aborted (as git passes it)')
    .requiredOption('--home <dir>', HOME_HELP)
    .requiredOption('--ws <ws>', 'workspace')
    .action(async (state: string, opts: { home: string; ws: string }) => {
      // Loaded here: every other command would pay for the YAML and schema modules otherwise.
      const { runReferenceTransaction } = await import('../hooks/reference-transaction')
      const stdin = await readStdin()
      const r = await runReferenceTransaction(state, {
        home: resolveHome(opts.home),
        ws: assertName('workspace', opts.ws),
        stdin,
      })
      for (const line of r.stderr) process.stderr.write(`${line}\n`)
      process.exitCode = r.code
    })
  hook
    .command('fire-attempts')
    .description('fire the cohort an attempts/* commit asks for (started detached by the hook)')
    .requiredOption('--home <dir>', HOME_HELP)
    .requiredOption('--ws <ws>', 'workspace')
    .requiredOption('--commit <oid>', 'the attempts/* commit')
    .action(async (opts: { home: string; ws: string; commit: string }) => {
      const { fireFromCommit } = await import('../proxy/attempts/trailers')
      await fireFromCommit(resolveHome(opts.home), assertName('workspace', opts.ws), opts.commit)
    })
}
