/**
 * The `holdfast` command: one file per subcommand, registered here. Every command has `--help`
 * and `--home`; tables take `--json`. Invariant: a refusal prints one line on stderr and exits 1.
 */
import fs from 'node:fs'
import path from 'node:path'
import { Command, CommanderError } from 'commander'
import { registerServe } from './serve'
import { registerEnv } from './env'
import { registerSteps } from './steps'
import { registerWhy } from './why'
import { registerConfig } from './config'
import { registerRoles } from './roles'
import { registerDispatch } from './dispatch'
import { registerAttempt } from './attempt'
import { registerCohort } from './cohort'
import { registerClients } from './clients'
import { registerTypes } from './types'
import { registerHooks } from './hooks'
import { registerReplay } from './replay'
import { CliError } from './output'

/** The package version (package.json sits two levels up from both src/cli and dist/cli). */
export function packageVersion(): string {
  const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
    version: string
  }
  return pkg.version
}

export function buildProgram(): Command {
  const program = new Command()
  program
    .name('holdfast')
    .description(
      'A local proxy for LLM provider requests: keeps the prompt cache warm, records every step in git.\n' +
        'Start with `holdfast serve`, then `eval "$(holdfast env)"` in the shell that runs your agent.',
    )
    .version(packageVersion())
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
  registerServe(program)
  registerEnv(program)
  registerSteps(program)
  registerWhy(program)
  registerRoles(program)
  registerConfig(program)
  registerAttempt(program)
  registerCohort(program)
  registerDispatch(program)
  registerClients(program)
  registerTypes(program)
  registerHooks(program)
  registerReplay(program)
  return program
}

export async function main(argv: string[]): Promise<void> {
  const program = buildProgram()
  try {
    await program.parseAsync(argv)
  } catch (err) {
    if (err instanceof CommanderError) {
      process.exitCode = err.exitCode
      return
    }
    // One sentence for the user; the stack only when asked for (HOLDFAST_DEBUG=1).
    const e = err as Error
    process.stderr.write(
      `holdfast: ${process.env.HOLDFAST_DEBUG ? (e?.stack ?? String(err)) : (e?.message ?? String(err))}\n`,
    )
    process.exitCode = err instanceof CliError ? err.exitCode : 1
  }
}
