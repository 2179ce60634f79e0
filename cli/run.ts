/**
 * `holdfast run [--ws W] [--agent A] -- <command…>`: run an agent through holdfast. The command
 * gets the base-URL exports of `holdfast env` for `/w/<ws>/a/<agent>` (the workspace defaults to
 * the current directory's name), the terminal, and its exit code is ours; a known harness gets its
 * own flags (proxy/core/harness-argv: Claude Code the MCP endpoint, Codex its base-URL config).
 * Serve is shared: the run takes a lease in the home, uses the running serve or starts one
 * (`serve --leased`, in the background), and a serve that run started stops once the last run's
 * command exited, every step committed. Invariant: a serve a person started is never stopped by
 * it; two runs starting at once end up on one serve.
 */
import { spawnChild } from '../proxy/process/spawn'
import { selfArgv } from '../proxy/process/package-root'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { Command } from 'commander'
import { harnessArgv } from '../proxy/core/harness-argv'
import { assertName, fitName, checkName } from '../proxy/core/naming'
import { resolveHome } from '../proxy/store/home'
import { homeLockHolder, pidAlive, readServeInfo } from '../proxy/store/serve-lock'
import { liveLeases, takeLease } from '../proxy/process/run-leases'
import { envVars, keyRows } from './env'
import { CliError } from './output'

const STARTUP_MS = 60_000
const POLL_MS = 50

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

/** The workspace a run addresses without `--ws`: the current directory's name, made a usable name. */
export function workspaceOf(cwd: string): string {
  const raw = path.basename(cwd)
  const cleaned = fitName(raw.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[.-]+|[.]+$/g, ''))
  return cleaned && checkName('workspace', cleaned) === undefined ? cleaned : 'default'
}

/** Start `holdfast serve --leased` detached (its own process group: a Ctrl-C meant for the agent spares it). */
async function startServe(
  home: string,
  port: string | undefined,
): Promise<{ url: string; pid: number } | { exited: number | null }> {
  const logFile = path.join(home, 'serve.log')
  fs.mkdirSync(home, { recursive: true })
  const log = fs.openSync(logFile, 'a')
  const entry = process.argv[1] as string
  const args = [
    ...process.execArgv,
    entry,
    'serve',
    '--leased',
    '--home',
    home,
    ...(port ? ['--port', port] : []),
  ]
  const child = spawnChild(process.execPath, args, { detached: true, stdio: ['ignore', log, log] })
  fs.closeSync(log)
  child.unref()
  let exited: number | null | undefined
  child.once('exit', (code) => (exited = code))
  const deadline = Date.now() + STARTUP_MS
  for (;;) {
    const info = readServeInfo(home)
    if (info && info.pid === child.pid) return { url: info.url, pid: info.pid }
    if (exited !== undefined) return { exited }
    if (Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new CliError(`holdfast serve did not start within ${STARTUP_MS / 1000} s (log: ${logFile})`)
    }
    await sleep(POLL_MS)
  }
}

/**
 * The serve of this home: the running one, or one this run starts. When another serve is starting
 * or stopping (the home lock is held but there is no serve.json yet or any more), wait for it.
 */
export async function serveFor(
  home: string,
  port: string | undefined,
): Promise<{ url: string; pid: number; leased: boolean; started: boolean }> {
  const deadline = Date.now() + STARTUP_MS
  for (;;) {
    const info = readServeInfo(home)
    if (info) return { url: info.url, pid: info.pid, leased: info.leased === true, started: false }
    if (homeLockHolder(home) === undefined) {
      const s = await startServe(home, port)
      if ('url' in s) return { ...s, leased: true, started: true }
      // Another run's serve took the lock first: use that one. Anything else is a real failure.
      if (homeLockHolder(home) === undefined && !readServeInfo(home)) {
        const last = fs.readFileSync(path.join(home, 'serve.log'), 'utf8').trimEnd().split('\n').pop() ?? ''
        throw new CliError(
          `holdfast serve exited (code ${s.exited}) before listening: ${last} (log: ${path.join(home, 'serve.log')})`,
        )
      }
    }
    if (Date.now() > deadline)
      throw new CliError(`no holdfast serve answered on ${home} within ${STARTUP_MS / 1000} s`)
    await sleep(POLL_MS)
  }
}

/** After the last lease is gone, wait for a leased serve to finish its steps and commits and exit. */
async function awaitStop(home: string, pid: number): Promise<void> {
  const started = Date.now()
  let said = false
  while (pidAlive(pid)) {
    if (liveLeases(home).length > 0) return // another run still uses it
    if (!said && Date.now() - started > 2000) {
      process.stderr.write('holdfast: waiting for serve to commit its last steps…\n')
      said = true
    }
    if (Date.now() - started > 10 * STARTUP_MS) return
    await sleep(POLL_MS * 2)
  }
}

/** Run `argv` with the terminal attached and `env` added; resolves with its exit code (128+n for a signal). */
async function runAttached(
  argv: string[],
  env: Record<string, string>,
  spawned: (pid: number | undefined) => void,
): Promise<number> {
  const [cmd, ...rest] = argv as [string, ...string[]]
  const child = spawnChild(cmd, rest, { stdio: 'inherit', env })
  spawned(child.pid)
  // The terminal's Ctrl-C reaches the command itself; holdfast waits for it to finish.
  const ignore = (): void => undefined
  process.on('SIGINT', ignore)
  try {
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
      child.once('error', (err) => reject(new CliError(`cannot run ${cmd}: ${err.message}`)))
      child.once('exit', (c, sig) => resolve([c, sig]))
    })
    if (code !== null) return code
    const signals: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15 }
    return 128 + (signals[signal ?? ''] ?? 1)
  } finally {
    process.off('SIGINT', ignore)
  }
}

/**
 * Whether the user's Claude Code settings already name a status line: `$CLAUDE_CONFIG_DIR` (else
 * `~/.claude`) `settings.json`, and the project's `.claude/settings.json` and `settings.local.json`.
 * A file that cannot be read or parsed names none.
 */
export function hasOwnStatusLine(cwd: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const user = env.CLAUDE_CONFIG_DIR ?? path.join(os.homedir(), '.claude')
  const files = [
    path.join(user, 'settings.json'),
    path.join(cwd, '.claude', 'settings.json'),
    path.join(cwd, '.claude', 'settings.local.json'),
  ]
  return files.some((f) => {
    try {
      const s = JSON.parse(fs.readFileSync(f, 'utf8')) as { statusLine?: unknown }
      return s !== null && typeof s === 'object' && s.statusLine !== undefined && s.statusLine !== null
    } catch {
      return false
    }
  })
}

/** The argv `holdfast run` gives `argv` at `base` (see proxy/core/harness-argv). */
export function composeArgv(
  argv: readonly string[],
  base: string,
  token: string | undefined,
  mcp: boolean,
): string[] {
  return harnessArgv(argv, { base, token, mcp }).argv
}

export function registerRun(program: Command): void {
  program
    .command('run')
    .description('run a command (an agent) through holdfast, sharing one serve between runs')
    .argument('<command...>', 'the command and its arguments (after --)')
    .option('--ws <workspace>', 'address this workspace (default: the current directory’s name)')
    .option('--agent <agent>', 'address this agent (default from holdfast.yaml: main)')
    .option('--port <n>', 'port for a serve this command starts (default from holdfast.yaml)')
    .option('--no-mcp', "do not connect Claude Code to the agent's MCP endpoint")
    .option(
      '--no-statusline',
      "do not make `holdfast statusline` Claude Code's status line (it is added only when your settings have none)",
    )
    .option('--home <dir>', 'holdfast home (default $HOLDFAST_HOME, then ~/.holdfast)')
    .passThroughOptions()
    .action(
      async (
        argv: string[],
        o: {
          ws?: string
          agent?: string
          port?: string
          home?: string
          mcp: boolean
          statusline: boolean
        },
      ) => {
        const home = resolveHome(o.home)
        const ws = assertName('workspace', o.ws ?? workspaceOf(process.cwd()))
        const { loadConfig } = await import('../proxy/store/config')
        const { homeToken } = await import('../proxy/store/token')
        const config = loadConfig(home)
        const agent = assertName('agent', o.agent ?? config.defaults.agent)
        const lease = takeLease(home, argv.join(' '))
        let serve: Awaited<ReturnType<typeof serveFor>> | undefined
        let code: number
        try {
          serve = await serveFor(home, o.port)
          if (serve.started)
            process.stderr.write(
              `holdfast: started serve on ${serve.url} (log: ${path.join(home, 'serve.log')}); it stops when the last holdfast run ends\n`,
            )
          // Read once serve runs: its first start makes the home's token.
          const token = homeToken(home, config)
          const vars = envVars(serve.url, ws, agent, token, keyRows(config))
          const own = process.env.ANTHROPIC_CUSTOM_HEADERS
          if (vars.ANTHROPIC_CUSTOM_HEADERS && own)
            vars.ANTHROPIC_CUSTOM_HEADERS = `${own}\n${vars.ANTHROPIC_CUSTOM_HEADERS}`
          const statusline =
            o.statusline && !hasOwnStatusLine(process.cwd())
              ? [...selfArgv(), 'statusline', '--home', home]
              : undefined
          const plan = harnessArgv(argv, {
            base: vars.ANTHROPIC_BASE_URL as string,
            token,
            mcp: o.mcp,
            ...(statusline ? { statusline } : {}),
          })
          if (plan.warning) process.stderr.write(`${plan.warning}\n`)
          code = await runAttached(plan.argv, vars, (pid) => lease.setChild(pid))
        } finally {
          lease.release()
          if (serve?.leased) await awaitStop(home, serve.pid)
        }
        process.exitCode = code
      },
    )
}
