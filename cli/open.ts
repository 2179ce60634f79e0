/**
 * `holdfast open [ws [agent [NNN]]]`: open the web view of the running serve in the browser, at the
 * workspace, agent or step named, with a one-time link that signs the browser in (`--print` prints
 * the link instead). Invariant: without a running serve it refuses; the link works once, for two
 * minutes, and carries no secret that outlives it.
 */
import type { Command } from 'commander'
import { assertName } from '../proxy/core/naming'
import { spawnChild } from '../proxy/process/spawn'
import { resolveHome } from '../proxy/store/home'
import { readServeInfo } from '../proxy/store/serve-lock'
import { makeTicket } from '../proxy/view/auth'
import { serverLinks } from '../proxy/view/links'
import { stepNumber } from '../proxy/report/why'
import { CliError } from './output'

/** The view's path for what the arguments name. */
export function viewPath(ws?: string, agent?: string, step?: string): string {
  if (ws === undefined) return serverLinks.home()
  assertName('workspace', ws)
  if (agent === undefined) return serverLinks.workspace(ws)
  assertName('agent', agent)
  if (step === undefined) return serverLinks.agent(ws, agent)
  let n: number
  try {
    n = stepNumber(step)
  } catch (err) {
    throw new CliError((err as Error).message)
  }
  return serverLinks.step(ws, agent, n)
}

/** The command that opens a URL in the user's browser here ($BROWSER first). */
export function browserCommand(platform = process.platform, env = process.env): string[] {
  if (env.BROWSER) return [env.BROWSER]
  if (platform === 'darwin') return ['open']
  if (platform === 'win32') return ['cmd', '/c', 'start', '""']
  return ['xdg-open']
}

/** The secret the running serve signs the view with: the configured token, else the home's token file. */
export async function viewSecretOf(home: string): Promise<string> {
  const { loadConfig } = await import('../proxy/store/config')
  const { ensureTokenFile, homeToken } = await import('../proxy/store/token')
  return homeToken(home, loadConfig(home)) ?? ensureTokenFile(home)
}

export function registerOpen(program: Command): void {
  program
    .command('open')
    .description('open the web view of the running serve in the browser (a one-time sign-in link)')
    .argument('[ws]', 'workspace')
    .argument('[agent]', 'agent')
    .argument('[NNN]', 'step number')
    .option('--print', 'print the link instead of opening a browser')
    .option('--home <dir>', 'holdfast home (default $HOLDFAST_HOME, then ~/.holdfast)')
    .action(
      async (
        ws: string | undefined,
        agent: string | undefined,
        step: string | undefined,
        o: { print?: boolean; home?: string },
      ) => {
        const home = resolveHome(o.home)
        const info = readServeInfo(home)
        if (!info)
          throw new CliError(
            `holdfast serve is not running on ${home}; start it first (holdfast serve --home ${home})`,
          )
        const url = `${info.url}${viewPath(ws, agent, step)}?ticket=${makeTicket(await viewSecretOf(home))}`
        if (o.print) {
          process.stdout.write(`${url}\n`)
          return
        }
        const [command, ...args] = browserCommand()
        const opened = await new Promise<boolean>((resolve) => {
          const child = spawnChild(command as string, [...args, url], { stdio: 'ignore', detached: true })
          child.once('error', () => resolve(false))
          child.once('spawn', () => {
            child.unref()
            resolve(true)
          })
        })
        process.stdout.write(
          opened
            ? `opened ${info.url}${viewPath(ws, agent, step)} in the browser (the link signs it in once)\n`
            : `no browser could be started (${command}); open this link (valid two minutes, once):\n${url}\n`,
        )
      },
    )
}
