/**
 * `holdfast env`: the shell exports that point the SDKs and Claude Code at the running server,
 * optionally addressed to one workspace/agent (`/w/<ws>/a/<agent>`). Invariant: it never guesses
 * a URL; without a running server (serve.json with a live pid) it refuses.
 */
import type { Command } from 'commander'
import { assertName } from '../proxy/core/naming'
import { resolveHome } from '../proxy/store/home'
import { readServeInfo } from '../proxy/store/serve-lock'
import { CliError } from './output'

const shellQuote = (s: string): string => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`)

/** The variables an agent's shell needs to reach holdfast at `url` (and the given address). */
export function envVars(
  url: string,
  ws: string | undefined,
  agent: string | undefined,
  token: string | undefined,
): Record<string, string> {
  let base = url
  if (ws !== undefined || agent !== undefined) {
    base += `/w/${encodeURIComponent(ws ?? 'default')}/a/${encodeURIComponent(agent ?? 'main')}`
  }
  const vars: Record<string, string> = { ANTHROPIC_BASE_URL: base, OPENAI_BASE_URL: `${base}/v1` }
  if (token) vars.ANTHROPIC_CUSTOM_HEADERS = `x-holdfast-token: ${token}`
  // Claude Code sends its session and agent ids either way; with this set, newer versions (2.1.332)
  // add x-claude-code-request-class. The claude-code plugin reads them (docs/plugins.md).
  vars.CLAUDE_CODE_GATEWAY_HINT_HEADERS = '1'
  return vars
}

export function envLines(
  url: string,
  ws: string | undefined,
  agent: string | undefined,
  token: string | undefined,
): string[] {
  return Object.entries(envVars(url, ws, agent, token)).map(([k, v]) => `export ${k}=${shellQuote(v)}`)
}

export function registerEnv(program: Command): void {
  program
    .command('env')
    .description('print the base-URL exports for the running server (eval "$(holdfast env)")')
    .option('--home <dir>', 'holdfast home (default $HOLDFAST_HOME, then ~/.holdfast)')
    .option('--ws <workspace>', 'address this workspace (path prefix /w/<ws>/a/<agent>)')
    .option('--agent <agent>', 'address this agent')
    .action(async (opts: { home?: string; ws?: string; agent?: string }) => {
      const home = resolveHome(opts.home)
      const info = readServeInfo(home)
      if (!info)
        throw new CliError(
          `holdfast serve is not running on ${home}; start it first (holdfast serve --home ${home})`,
        )
      // Loaded only now: a server that is not running is said without reading YAML or schemas.
      const { configuredToken, loadConfig } = await import('../proxy/store/config')
      const config = loadConfig(home)
      const ws = opts.ws === undefined ? undefined : assertName('workspace', opts.ws)
      const agent = opts.agent === undefined ? undefined : assertName('agent', opts.agent)
      const defaults = config.defaults
      const lines = envLines(
        info.url,
        ws ?? (agent !== undefined ? defaults.workspace : undefined),
        agent ?? (ws !== undefined ? defaults.agent : undefined),
        configuredToken(config),
      )
      process.stdout.write(lines.join('\n') + '\n')
    })
}
