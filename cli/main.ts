/**
 * The `holdfast` command. Every command has `--help` and `--home`; tables take `--json`.
 * Invariant: a refusal prints one line on stderr and exits 1; a run loads only the modules of
 * the command it runs (the others are listed from the table below, which a test keeps equal to
 * their real registrations), so `holdfast --help` and `holdfast env` start almost as fast as node.
 */
import { Command, CommanderError } from 'commander'
import { packageVersion } from '../proxy/process/package-root'
import { CliError } from './output'

type Register = (program: Command) => void

/**
 * The commands in `--help` order: the term and description `--help` shows, and how to load the
 * full registration (one module each).
 */
export const COMMANDS = [
  {
    name: 'serve',
    term: 'serve [options]',
    description: 'run the proxy: forward, hold and record every step (the main job)',
    load: async (): Promise<Register> => (await import('./serve')).registerServe,
  },
  {
    name: 'env',
    term: 'env [options]',
    description: 'print the base-URL and token exports for the running server (eval "$(holdfast env)")',
    load: async (): Promise<Register> => (await import('./env')).registerEnv,
  },
  {
    name: 'run',
    term: 'run [options] <command...>',
    description: 'run a command (an agent) through holdfast, sharing one serve between runs',
    load: async (): Promise<Register> => (await import('./run')).registerRun,
  },
  {
    name: 'agents',
    term: 'agents [options] <ws>',
    description:
      'list the agents of a workspace: splits and their parents, models, totals, what the hold saved',
    load: async (): Promise<Register> => (await import('./agents')).registerAgents,
  },
  {
    name: 'steps',
    term: 'steps [options] <ws> <agent>',
    description: "list an agent's steps: tokens, cache reads/writes, cost, what the hold saved, timings",
    load: async (): Promise<Register> => (await import('./steps')).registerSteps,
  },
  {
    name: 'why',
    term: 'why [options] <ws> <agent> <NNN>',
    description:
      'explain a step: what moved in the cached prefix, whether the hold applied, the cache counters',
    load: async (): Promise<Register> => (await import('./why')).registerWhy,
  },
  {
    name: 'roles',
    term: 'roles [options]',
    description: 'list the roles (provider, model) at the followed config of a ref',
    load: async (): Promise<Register> => (await import('./roles')).registerRoles,
  },
  {
    name: 'config',
    term: 'config',
    description: "edit and show a workspace's providers.yaml (roles) on a config lineage",
    load: async (): Promise<Register> => (await import('./config')).registerConfig,
  },
  {
    name: 'attempt',
    term: 'attempt [options] <ws>',
    description: 'fire attempts from a recorded step: one per --role, compared with `holdfast cohort`',
    load: async (): Promise<Register> => (await import('./attempt')).registerAttempt,
  },
  {
    name: 'cohort',
    term: 'cohort [options] <ws> <notch>',
    description: 'show the attempts fired from one notch, side by side',
    load: async (): Promise<Register> => (await import('./cohort')).registerCohort,
  },
  {
    name: 'dispatch',
    term: 'dispatch [options] <role> <ws> <parent>',
    description:
      "fork an agent's conversation from a ref into a new agent with a role and a goal (one attempt)",
    load: async (): Promise<Register> => (await import('./dispatch')).registerDispatch,
  },
  {
    name: 'clients',
    term: 'clients',
    description: 'tool hosts (MCP servers) and the tools an agent has loaded from them',
    load: async (): Promise<Register> => (await import('./clients')).registerClients,
  },
  {
    name: 'types',
    term: 'types [options] [ws] [agent]',
    description: "write TypeScript interfaces for an agent's loaded tools, or a plugin's options",
    load: async (): Promise<Register> => (await import('./types')).registerTypes,
  },
  {
    name: 'hooks',
    /** Also registers the hidden `hook` command the installed git hooks run. */
    also: 'hook',
    term: 'hooks',
    description: "manage the workspace repository's git hooks",
    load: async (): Promise<Register> => (await import('./hooks')).registerHooks,
  },
  {
    name: 'remote',
    term: 'remote',
    description: 'share records and config through the git remote named holdfast: set, pull, fetch, show',
    load: async (): Promise<Register> => (await import('./remote')).registerRemote,
  },
  {
    name: 'replay',
    term: 'replay [options] <ws> <agent>',
    description:
      "run a plugin's deciding hooks over an agent's recorded steps and print what it would decide",
    load: async (): Promise<Register> => (await import('./replay')).registerReplay,
  },
  {
    name: 'recover',
    term: 'recover [options] <ws>',
    description: 'commit what a disk fault or a crash left uncommitted (journal, quarantine), and say what',
    load: async (): Promise<Register> => (await import('./recover')).registerRecover,
  },
  {
    name: 'open',
    term: 'open [options] [ws] [agent] [NNN]',
    description: 'open the web view of the running serve in the browser (a one-time sign-in link)',
    load: async (): Promise<Register> => (await import('./open')).registerOpen,
  },
  {
    name: 'export',
    term: 'export [options] <ws> [agent]',
    description: 'write the web view of a workspace (or one agent) as one HTML file that opens offline',
    load: async (): Promise<Register> => (await import('./export')).registerExport,
  },
  {
    name: 'statusline',
    term: 'statusline [options]',
    description:
      "Claude Code's statusLine command: the session's agent, cache read share, hold savings, cost",
    load: async (): Promise<Register> => (await import('./statusline')).registerStatusline,
  },
] as const

/** The program without its commands: name, description, version, error behaviour. */
export function programShell(): Command {
  return new Command()
    .name('holdfast')
    .description(
      'A local proxy for LLM provider requests: keeps the prompt cache warm, records every step in git.\n' +
        'Start with `holdfast serve`, then `eval "$(holdfast env)"` in the shell that runs your agent.',
    )
    .version(packageVersion())
    .showHelpAfterError('(run with --help for usage)')
    .enablePositionalOptions() // `holdfast run -- <command --its-options>` passes them through
    .exitOverride()
}

/** The table entry of the command an argv runs (`holdfast help <c>` counts as `<c>`), if it names one. */
export function commandOf(argv: readonly string[]): string | undefined {
  const words = argv.slice(2).filter((w) => !w.startsWith('-'))
  const first = words[0] === 'help' ? words[1] : words[0]
  return COMMANDS.find((c) => c.name === first || ('also' in c && c.also === first))?.name
}

/**
 * The program for one run: the named command fully registered, every other one as a stub that
 * `--help` lists with its real term (a stub never runs: only an argv naming it loads it).
 */
export async function programFor(argv: readonly string[]): Promise<Command> {
  const program = programShell()
  const chosen = commandOf(argv)
  const terms = new Map<string, string>()
  for (const c of COMMANDS) {
    if (c.name === chosen) (await c.load())(program)
    else {
      program.command(c.name).description(c.description)
      terms.set(c.name, c.term)
    }
  }
  const help = program.createHelp()
  program.configureHelp({ subcommandTerm: (cmd) => terms.get(cmd.name()) ?? help.subcommandTerm(cmd) })
  return program
}

export async function main(argv: string[]): Promise<void> {
  try {
    const program = await programFor(argv)
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
