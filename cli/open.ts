/**
 * `holdfast open [ws [agent [NNN]]]`: open the web view of the running serve in the browser, at the
 * workspace, agent or step named, with a one-time link that signs the browser in (`--print` prints
 * the link instead). Invariant: without a running serve it refuses; it says "opened" only when the
 * opener ran and did not fail (its exit is awaited, about 2 s), and otherwise prints the link with
 * the reason no browser opened; the link works once, for two minutes, and carries no secret that
 * outlives it.
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

/** How long the opener has to fail before it counts as opened (a browser itself may run on). */
export const OPENER_WAIT_MS = 2_000

/** Why no browser can open here before trying: Linux with no display and no $BROWSER. */
export function noDisplay(platform = process.platform, env = process.env): string | undefined {
  if (env.BROWSER || platform === 'darwin' || platform === 'win32') return undefined
  if (env.DISPLAY || env.WAYLAND_DISPLAY) return undefined
  return 'no display is reachable (DISPLAY and WAYLAND_DISPLAY are unset, and so is BROWSER)'
}

/**
 * Open `url` with the browser command and wait (bounded) for the opener's verdict: an opener
 * that is missing, or exits non-zero within `waitMs` (xdg-open with no browser behind it exits 3),
 * did not open it; one that exits 0 or is still running did.
 */
export function openBrowser(
  url: string,
  env = process.env,
  platform = process.platform,
  waitMs = OPENER_WAIT_MS,
): Promise<{ ok: true } | { ok: false; why: string }> {
  const blind = noDisplay(platform, env)
  if (blind) return Promise.resolve({ ok: false, why: blind })
  const [command, ...args] = browserCommand(platform, env) as [string, ...string[]]
  return new Promise((resolve) => {
    const child = spawnChild(command, [...args, url], { stdio: 'ignore', detached: true })
    const timer = setTimeout(() => {
      child.removeAllListeners('exit')
      child.unref()
      resolve({ ok: true })
    }, waitMs)
    child.once('error', (err) => {
      clearTimeout(timer)
      resolve({
        ok: false,
        why: `the opener ${command} could not start (${(err as NodeJS.ErrnoException).code ?? err.message})`,
      })
    })
    child.once('exit', (code, signal) => {
      clearTimeout(timer)
      resolve(
        code === 0
          ? { ok: true }
          : {
              ok: false,
              why: `the opener ${command} failed (${signal ? `signal ${signal}` : `exit ${code}`})`,
            },
      )
    })
  })
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
        const opened = await openBrowser(url)
        process.stdout.write(
          opened.ok
            ? `opened ${info.url}${viewPath(ws, agent, step)} in the browser (the link signs it in once)\n`
            : `no browser opened: ${opened.why}\nopen this link (valid two minutes, once):\n${url}\n`,
        )
      },
    )
}
