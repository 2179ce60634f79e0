/**
 * The argv `holdfast run` gives a known harness so that it reaches holdfast (DESIGN §11 amended).
 * Claude Code reads its base URL from the environment and gets `--mcp-config` naming the agent's
 * MCP endpoint (with the home's token as a header) and, unless told not to, `--settings` making
 * `holdfast statusline` its status line for that session; Codex ignores `OPENAI_BASE_URL` for its built-in
 * provider, so it gets its own config flag `-c openai_base_url="<base>/v1"` (its `model_provider`
 * is left as the user has it, so their thread history stays theirs). A harness holdfast knows it
 * cannot route runs as given, with a warning; anything else runs as given. Pure.
 */
import path from 'node:path'
import { HARNESS_SERVER } from './harness-tools'

export interface HarnessOptions {
  /** The agent's base URL: `http://127.0.0.1:8787/w/<ws>/a/<agent>` (no `/v1`). */
  base: string
  /** The home's token, for holdfast's own endpoints (the MCP endpoint). */
  token: string | undefined
  /** Connect Claude Code to the agent's MCP endpoint (`--no-mcp` turns it off). */
  mcp: boolean
  /**
   * The command Claude Code runs as its status line (`holdfast statusline`, as argv), passed for
   * this session through its own `--settings` flag; absent: none (`--no-statusline`, or the user
   * has a statusLine of their own).
   */
  statusline?: readonly string[]
}

/** One sh word: single-quoted, a `'` inside written as `'\''`. */
const sh = (word: string): string =>
  /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`

/** Claude Code's `--settings` value that makes `argv` its status line. */
export function statusLineSettings(argv: readonly string[]): string {
  return JSON.stringify({ statusLine: { type: 'command', command: argv.map(sh).join(' '), padding: 0 } })
}

export interface HarnessPlan {
  argv: string[]
  /** The harness recognised by the command's name, if any. */
  harness: 'claude' | 'codex' | undefined
  /** One sentence for stderr when the command will not reach holdfast. */
  warning?: string
}

/**
 * Harnesses that do not speak a dialect holdfast proxies, by command name: run as given, and said.
 * Gemini CLI talks to Google's Gemini API; Cursor's agent CLI to Cursor's own service.
 */
const UNROUTABLE: Readonly<Record<string, string>> = {
  gemini: "Gemini CLI speaks Google's Gemini API, which holdfast does not proxy",
  'cursor-agent': "Cursor's agent CLI talks to Cursor's own service, not to a provider base URL",
}

/** The command's name as it would be found on PATH (`/usr/local/bin/claude` → `claude`). */
export function commandName(cmd: string): string {
  return path.basename(cmd).replace(/\.(exe|cmd|js)$/i, '')
}

/** The argv to run `argv` through holdfast at `opts.base`, and what to warn about. */
export function harnessArgv(argv: readonly string[], opts: HarnessOptions): HarnessPlan {
  const [cmd, ...rest] = argv
  if (cmd === undefined) return { argv: [], harness: undefined }
  const name = commandName(cmd)
  if (name === 'claude') {
    const added: string[] = []
    if (opts.mcp) {
      const server = {
        type: 'http',
        url: `${opts.base}/mcp`,
        ...(opts.token ? { headers: { 'x-holdfast-token': opts.token } } : {}),
      }
      added.push('--mcp-config', JSON.stringify({ mcpServers: { [HARNESS_SERVER]: server } }))
    }
    // The user's own --settings is theirs: holdfast adds no second one.
    if (opts.statusline && !rest.some((a) => a === '--settings' || a.startsWith('--settings=')))
      added.push('--settings', statusLineSettings(opts.statusline))
    return { argv: [cmd, ...added, ...rest], harness: 'claude' }
  }
  if (name === 'codex') {
    // A TOML basic string: JSON's quoting of a URL is one. Global flags apply to every subcommand.
    const flag = `openai_base_url=${JSON.stringify(`${opts.base}/v1`)}`
    return { argv: [cmd, '-c', flag, ...rest], harness: 'codex' }
  }
  const why = UNROUTABLE[name]
  if (why !== undefined)
    return {
      argv: [...argv],
      harness: undefined,
      warning: `holdfast cannot route ${name}: ${why}; it runs as given and nothing it sends is recorded`,
    }
  return { argv: [...argv], harness: undefined }
}
