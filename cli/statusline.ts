/**
 * `holdfast statusline`: Claude Code's `statusLine` command (JSON on stdin with the session id; one
 * line out): the session's agent, its last step's cache read share, what the hold saved and the
 * cost so far, asked of the running serve. Invariant: it always exits 0 and prints one line — empty
 * when no serve runs or it does not answer in time; and it loads nothing but node's own modules on
 * its way (bin/holdfast.js runs `main` here without the command program), since Claude Code runs it
 * after every message.
 */
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import type { Command } from 'commander'

/** How long the serve may take to answer before the line is left empty. */
export const STATUS_TIMEOUT_MS = 1500

function homeOf(argv: readonly string[]): string {
  const i = argv.indexOf('--home')
  const flag = i >= 0 ? argv[i + 1] : argv.find((a) => a.startsWith('--home='))?.slice('--home='.length)
  return path.resolve(flag ?? process.env.HOLDFAST_HOME ?? path.join(os.homedir(), '.holdfast'))
}

function readText(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8')
  } catch {
    return undefined
  }
}

/** The running serve's URL from serve.json, when its pid is alive. */
function serveUrl(home: string): string | undefined {
  try {
    const info = JSON.parse(readText(path.join(home, 'serve.json')) ?? '') as { url?: string; pid?: number }
    if (typeof info.url !== 'string' || typeof info.pid !== 'number') return undefined
    process.kill(info.pid, 0)
    return info.url
  } catch {
    return undefined
  }
}

function get(url: string, token: string | undefined): Promise<{ status: number; body: string } | undefined> {
  return new Promise((resolve) => {
    const req = http.get(
      url,
      { headers: token ? { 'x-holdfast-token': token } : {}, timeout: STATUS_TIMEOUT_MS },
      (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (c: string) => (body += c))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
        res.on('error', () => resolve(undefined))
      },
    )
    req.on('timeout', () => req.destroy())
    req.on('error', () => resolve(undefined))
  })
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) return ''
  let text = ''
  for await (const chunk of process.stdin) text += String(chunk)
  return text
}

/** The line for a session: asks the serve with the home's token file, then (refused) with the configured token. */
export async function statusLine(home: string, input: string): Promise<string> {
  let session: unknown
  try {
    session = (JSON.parse(input) as { session_id?: unknown }).session_id
  } catch {
    return ''
  }
  const url = serveUrl(home)
  if (typeof session !== 'string' || !url) return ''
  const target = `${url}/ui/api/statusline?session=${encodeURIComponent(session)}`
  const fileToken = (): string | undefined =>
    process.env.HOLDFAST_TOKEN || readText(path.join(home, 'token'))?.trim() || undefined
  const sent = fileToken()
  let answer = await get(target, sent)
  if (answer?.status === 401) {
    // The serve makes the home's token file when a view request first needs it: read it again.
    const made = fileToken()
    if (made && made !== sent) answer = await get(target, made)
  }
  if (answer?.status === 401) {
    // A token set in holdfast.yaml: only now is the config (YAML, schemas) loaded.
    const { configuredToken, loadConfig } = await import('../proxy/store/config')
    const token = configuredToken(loadConfig(home))
    if (token && token !== sent) answer = await get(target, token)
  }
  if (answer?.status !== 200) return ''
  try {
    const line = (JSON.parse(answer.body) as { line?: unknown }).line
    return typeof line === 'string' ? line : ''
  } catch {
    return ''
  }
}

/** The whole command, as bin/holdfast.js runs it for `holdfast statusline` (no command program). */
export async function main(argv: readonly string[]): Promise<void> {
  // Never fail Claude Code's status bar: any fault is an empty line.
  const line = await statusLine(homeOf(argv), await readStdin()).catch(() => '')
  process.stdout.write(`${line}\n`)
}

export function registerStatusline(program: Command): void {
  program
    .command('statusline')
    .description(
      "Claude Code's statusLine command: the session's agent, cache read share, hold savings, cost",
    )
    .option('--home <dir>', 'holdfast home (default $HOLDFAST_HOME, then ~/.holdfast)')
    .action(async (o: { home?: string }) => main(o.home ? ['--home', o.home] : []))
}
