/**
 * `holdfast run [--ws W] [--agent A] -- <command…>`: run an agent through holdfast. Uses the home's
 * running `serve`, or starts one in the background for the command's lifetime (stopped, with its
 * steps finished and committed, when the command exits); the command gets the base-URL exports
 * of `holdfast env`, the terminal, and its exit code is ours. Invariant: a serve this command did
 * not start is never stopped by it.
 */
import type { ChildProcess } from 'node:child_process'
import { spawnChild } from '../proxy/spawn'
import fs from 'node:fs'
import path from 'node:path'
import { once } from 'node:events'
import type { Command } from 'commander'
import { assertName } from '../proxy/core/naming'
import { resolveHome } from '../proxy/store/home'
import { readServeInfo } from '../proxy/store/serve-lock'
import { envVars, keyRows } from './env'
import { CliError } from './output'

const STARTUP_MS = 30_000

/** Start `holdfast serve` detached (its own process group: a Ctrl-C meant for the agent spares it). */
async function startServe(
  home: string,
  port: string | undefined,
): Promise<{ child: ChildProcess; url: string }> {
  const logFile = path.join(home, 'serve.log')
  fs.mkdirSync(home, { recursive: true })
  const log = fs.openSync(logFile, 'a')
  const entry = process.argv[1] as string
  const args = [...process.execArgv, entry, 'serve', '--home', home, ...(port ? ['--port', port] : [])]
  const child = spawnChild(process.execPath, args, { detached: true, stdio: ['ignore', 'pipe', log] })
  fs.closeSync(log)
  const stdout = child.stdout as NonNullable<typeof child.stdout>
  let seen = ''
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new CliError(`holdfast serve did not start within ${STARTUP_MS / 1000} s (log: ${logFile})`))
    }, STARTUP_MS)
    stdout.on('data', (d: Buffer) => {
      seen += d.toString()
      const m = /^holdfast listening on (\S+)\n/.exec(seen)
      if (m) {
        clearTimeout(timer)
        resolve(m[1] as string)
      }
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      const last = fs.readFileSync(logFile, 'utf8').trimEnd().split('\n').pop() ?? ''
      reject(new CliError(`holdfast serve exited (code ${code}) before listening: ${last} (log: ${logFile})`))
    })
  })
  stdout.resume()
  return { child, url }
}

/** Stop the serve this command started: SIGTERM finishes in-flight steps and commits, then it exits. */
async function stopServe(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = once(child, 'exit')
  child.kill('SIGTERM')
  await exited
}

/** Run `argv` with the terminal attached and `env` added; resolves with its exit code (128+n for a signal). */
async function runAttached(argv: string[], env: Record<string, string>): Promise<number> {
  const [cmd, ...rest] = argv as [string, ...string[]]
  const child = spawnChild(cmd, rest, { stdio: 'inherit', env })
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
 * The argv to run: Claude Code (`claude`) also gets `--mcp-config` naming the agent's MCP endpoint,
 * so the agent sees its `clients` tool and loaded set (docs/tools.md); anything else runs as given.
 */
export function composeArgv(
  argv: readonly string[],
  base: string,
  token: string | undefined,
  mcp: boolean,
): string[] {
  const [cmd, ...rest] = argv
  if (cmd === undefined || !mcp || path.basename(cmd) !== 'claude') return [...argv]
  const server = {
    type: 'http',
    url: `${base}/mcp`,
    ...(token ? { headers: { 'x-holdfast-token': token } } : {}),
  }
  return [cmd, '--mcp-config', JSON.stringify({ mcpServers: { holdfast: server } }), ...rest]
}

export function registerRun(program: Command): void {
  program
    .command('run')
    .description('run a command (an agent) through holdfast, starting serve for it when none runs')
    .argument('<command...>', 'the command and its arguments (after --)')
    .option('--ws <workspace>', 'address this workspace (path prefix /w/<ws>/a/<agent>)')
    .option('--agent <agent>', 'address this agent')
    .option('--port <n>', 'port for a serve this command starts (default from holdfast.yaml)')
    .option('--no-mcp', "do not connect Claude Code to the agent's MCP endpoint")
    .option('--home <dir>', 'holdfast home (default $HOLDFAST_HOME, then ~/.holdfast)')
    .passThroughOptions()
    .action(
      async (
        argv: string[],
        o: { ws?: string; agent?: string; port?: string; home?: string; mcp: boolean },
      ) => {
        const home = resolveHome(o.home)
        const ws = o.ws === undefined ? undefined : assertName('workspace', o.ws)
        const agent = o.agent === undefined ? undefined : assertName('agent', o.agent)
        const { loadConfig } = await import('../proxy/store/config')
        const { homeToken } = await import('../proxy/store/token')
        const config = loadConfig(home)
        const running = readServeInfo(home)
        let started: ChildProcess | undefined
        let url = running?.url
        if (!url) {
          const s = await startServe(home, o.port)
          started = s.child
          url = s.url
          process.stderr.write(
            `holdfast: started serve on ${url} for this command (log: ${path.join(home, 'serve.log')})\n`,
          )
        }
        let code: number
        try {
          // Read once serve is up: a serve started just now made the home's token.
          const token = homeToken(home, config)
          const vars = envVars(
            url,
            ws ?? (agent !== undefined ? config.defaults.workspace : undefined),
            agent ?? (ws !== undefined ? config.defaults.agent : undefined),
            token,
            keyRows(config),
          )
          // `<base>/mcp` is the endpoint of the agent the exports address (the defaults' without a prefix).
          const base = vars.ANTHROPIC_BASE_URL as string
          code = await runAttached(composeArgv(argv, base, token, o.mcp), vars)
        } finally {
          if (started) await stopServe(started)
        }
        process.exitCode = code
      },
    )
}
