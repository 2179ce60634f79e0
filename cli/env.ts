/**
 * `holdfast env`: the shell exports that point the SDKs and Claude Code at the running server,
 * optionally addressed to one workspace/agent (`/w/<ws>/a/<agent>`), with the home's token: always
 * as Claude Code's `x-holdfast-token` header, and as the client's own key where the dialect's
 * default row adds the operator's key (`api_key_env`), so an SDK or Claude Code needs no key of its
 * own there. Invariant: it never guesses a URL; without a running server (serve.json with a live
 * pid) it refuses.
 */
import type { Command } from 'commander'
import { assertName } from '../proxy/core/naming'
import type { HoldfastConfig } from '../proxy/store/config'
import { resolveHome } from '../proxy/store/home'
import { readServeInfo } from '../proxy/store/serve-lock'
import { CliError } from './output'

const shellQuote = (s: string): string => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`)

/** Which dialects' default rows add the operator's key (`api_key_env`): the token is the client's key there. */
export interface KeyRows {
  anthropic?: boolean
  openai?: boolean
}

/** The default rows of holdfast.yaml that add the operator's key. */
export function keyRows(config: HoldfastConfig): KeyRows {
  return {
    anthropic: Boolean(config.providers.anthropic?.api_key_env),
    openai: Boolean(config.providers.openai?.api_key_env),
  }
}

/**
 * The variables an agent's shell needs to reach holdfast at `url` (and the given address). The
 * token goes in Claude Code's custom headers (sent on every request, whatever credential it uses),
 * and as the client's key for a row in `keys`, in the variable each SDK reads first:
 * `ANTHROPIC_API_KEY` (the Anthropic SDK prefers it to `ANTHROPIC_AUTH_TOKEN`; Claude Code gets a
 * credential from it) and `OPENAI_API_KEY` (the OpenAI SDK, Codex). A key of the user's own would be
 * replaced by the row's anyway.
 */
export function envVars(
  url: string,
  ws: string | undefined,
  agent: string | undefined,
  token: string | undefined,
  keys: KeyRows = {},
): Record<string, string> {
  let base = url
  if (ws !== undefined || agent !== undefined) {
    base += `/w/${encodeURIComponent(ws ?? 'default')}/a/${encodeURIComponent(agent ?? 'main')}`
  }
  const vars: Record<string, string> = { ANTHROPIC_BASE_URL: base, OPENAI_BASE_URL: `${base}/v1` }
  if (token) vars.ANTHROPIC_CUSTOM_HEADERS = `x-holdfast-token: ${token}`
  if (token && keys.anthropic) vars.ANTHROPIC_API_KEY = token
  if (token && keys.openai) vars.OPENAI_API_KEY = token
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
  keys: KeyRows = {},
): string[] {
  return Object.entries(envVars(url, ws, agent, token, keys)).map(([k, v]) => `export ${k}=${shellQuote(v)}`)
}

export function registerEnv(program: Command): void {
  program
    .command('env')
    .description('print the base-URL and token exports for the running server (eval "$(holdfast env)")')
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
      const { loadConfig } = await import('../proxy/store/config')
      const { homeToken } = await import('../proxy/store/token')
      const config = loadConfig(home)
      const ws = opts.ws === undefined ? undefined : assertName('workspace', opts.ws)
      const agent = opts.agent === undefined ? undefined : assertName('agent', opts.agent)
      const defaults = config.defaults
      const lines = envLines(
        info.url,
        ws ?? (agent !== undefined ? defaults.workspace : undefined),
        agent ?? (ws !== undefined ? defaults.agent : undefined),
        homeToken(home, config),
        keyRows(config),
      )
      process.stdout.write(lines.join('\n') + '\n')
    })
}
