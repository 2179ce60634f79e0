/**
 * The real Claude Code CLI, driven non-interactively for end-to-end tests: a pinned native binary
 * (from the platform package npm installed beside `@anthropic-ai/claude-code`, or beside the npm
 * alias of another pinned version, `claude-code-2-1-332`), an isolated home and config dir, a
 * dummy key, no nonessential traffic, and a scripted model for the fake upstream that answers what
 * each request asks for. Invariant: the CLI only ever reaches loopback (its base URL is holdfast;
 * any other HTTP(S) goes to a dead loopback proxy), and every session is ended by `close()`. A
 * missing binary throws, naming what to install.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import readline from 'node:readline'
import type { Asked, Script, ScriptedToolCall } from './fake-upstream'
import { ROOT } from './harness'

/** The npm package names Claude Code is pinned under: the package itself, and aliases of other versions. */
export const CLAUDE_PACKAGES = ['@anthropic-ai/claude-code', 'claude-code-2-1-332'] as const
export type ClaudePackage = (typeof CLAUDE_PACKAGES)[number]

/** The Claude Code version package.json pins (devDependencies) under `name` (an alias: `npm:…@<version>`). */
export function pinnedVersion(name: ClaudePackage = '@anthropic-ai/claude-code'): string {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    devDependencies: Record<string, string>
  }
  const spec = pkg.devDependencies[name]
  const v = spec?.replace(/^npm:@anthropic-ai\/claude-code@/, '')
  if (v === undefined || !/^\d+\.\d+\.\d+$/.test(v))
    throw new Error(
      `package.json must pin ${name} to an exact version of @anthropic-ai/claude-code (has ${spec})`,
    )
  return v
}

/** The platform package npm picks (`linux-x64`, `linux-x64-musl`, `darwin-arm64`, …). */
function platformKey(): string {
  const report = process.report.getReport() as { header?: { glibcVersionRuntime?: string } }
  const musl = process.platform === 'linux' && report.header?.glibcVersionRuntime === undefined
  return `${process.platform}-${os.arch()}${musl ? '-musl' : ''}`
}

/**
 * The native `claude` binary of the version pinned under `name`, from `node_modules` under `root`
 * (default: this repository): an alias's platform package is nested under the alias. Throws a
 * sentence naming the package when it is absent or of another version.
 */
export function claudeBinary(root = ROOT, name: ClaudePackage = '@anthropic-ai/claude-code'): string {
  const want = root === ROOT ? pinnedVersion(name) : undefined
  const pkg = `@anthropic-ai/claude-code-${platformKey()}`
  const nested = path.join(root, 'node_modules', name, 'node_modules', pkg)
  const dir =
    name !== '@anthropic-ai/claude-code' && fs.existsSync(nested)
      ? nested
      : path.join(root, 'node_modules', pkg)
  const exe = path.join(dir, process.platform === 'win32' ? 'claude.exe' : 'claude')
  if (!fs.existsSync(exe)) {
    throw new Error(
      `Claude Code's native binary is missing: ${exe} (npm installs ${pkg} as an optional dependency of ` +
        '@anthropic-ai/claude-code; run npm ci, and check that this platform has a package)',
    )
  }
  const version = (JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version: string })
    .version
  if (want !== undefined && version !== want)
    throw new Error(`${pkg} is ${version}, package.json pins ${want}: run npm ci`)
  return exe
}

/**
 * The environment of a Claude Code child: nothing inherited but PATH, an isolated home and config
 * dir, a dummy key, the base URL, and every switch that keeps it from calling anything else.
 */
export function claudeEnv(
  home: string,
  /** Undefined when `holdfast run` sets it. */
  baseUrl: string | undefined,
  extra: Record<string, string> = {},
): NodeJS.ProcessEnv {
  const dead = 'http://127.0.0.1:9' // discard port: nothing listens, a stray request fails at once
  return {
    PATH: process.env.PATH,
    HOME: home,
    TMPDIR: home,
    CLAUDE_CONFIG_DIR: path.join(home, '.claude'),
    ...(baseUrl === undefined ? {} : { ANTHROPIC_BASE_URL: baseUrl }),
    ANTHROPIC_API_KEY: 'sk-ant-api03-holdfast-test-dummy-key',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    DISABLE_BUG_COMMAND: '1',
    HTTP_PROXY: dead,
    HTTPS_PROXY: dead,
    http_proxy: dead,
    https_proxy: dead,
    NO_PROXY: '127.0.0.1,localhost',
    no_proxy: '127.0.0.1,localhost',
    ...extra,
  }
}

/** One line of `--output-format stream-json`. */
export interface StreamEvent {
  type: string
  subtype?: string
  [key: string]: unknown
}

export interface ClaudeSession {
  /** Sends one user turn and resolves with the events up to and including its `result`. */
  turn(text: string, timeoutMs?: number): Promise<StreamEvent[]>
  /** Every event so far. */
  readonly events: StreamEvent[]
  /** stderr so far. */
  stderr(): string
  /** Closes stdin and waits for the exit (SIGKILL after `ms`); resolves with the exit code. */
  close(ms?: number): Promise<number | null>
}

/**
 * Starts `claude -p` reading stream-json turns on stdin and writing stream-json events
 * (`--verbose`, which -p needs for them); `args` come after the format flags. With `via`, that
 * command runs Claude Code (`[node, holdfast, 'run', …, '--']`: the binary and its arguments last).
 */
export function startClaude(opts: {
  bin: string
  cwd: string
  env: NodeJS.ProcessEnv
  args?: string[]
  via?: string[]
}): ClaudeSession {
  const own = [
    opts.bin,
    '-p',
    '--input-format',
    'stream-json',
    '--output-format',
    'stream-json',
    '--verbose',
    ...(opts.args ?? []),
  ]
  const [cmd, ...args] = [...(opts.via ?? []), ...own] as [string, ...string[]]
  const child: ChildProcess = spawn(cmd, args, {
    cwd: opts.cwd,
    env: opts.env,
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  const events: StreamEvent[] = []
  let err = ''
  let waiter: ((e: StreamEvent) => void) | undefined
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const rl = readline.createInterface({ input: child.stdout as NodeJS.ReadableStream })
  rl.on('line', (line) => {
    let e: StreamEvent
    try {
      e = JSON.parse(line) as StreamEvent
    } catch {
      e = { type: 'non-json', line }
    }
    events.push(e)
    waiter?.(e)
  })
  /** The events from now up to and including the next `result`, after `send` ran. */
  const untilResult = async (timeoutMs: number, send: () => void): Promise<StreamEvent[]> => {
    const from = events.length
    const result = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        waiter = undefined
        reject(new Error(`no result from claude within ${timeoutMs} ms; stderr: ${err.slice(-2000)}`))
      }, timeoutMs)
      void exited.then((code) => {
        clearTimeout(timer)
        reject(new Error(`claude exited (${code}) during a turn; stderr: ${err.slice(-2000)}`))
      })
      waiter = (e) => {
        if (e.type !== 'result') return
        clearTimeout(timer)
        waiter = undefined
        resolve()
      }
    })
    send()
    await result
    return events.slice(from)
  }
  return {
    events,
    stderr: () => err,
    turn(text, timeoutMs = 90_000) {
      const message = { type: 'user', message: { role: 'user', content: [{ type: 'text', text }] } }
      return untilResult(timeoutMs, () => child.stdin?.write(`${JSON.stringify(message)}\n`))
    },
    async close(ms = 15_000) {
      child.stdin?.end()
      const timer = setTimeout(() => child.kill('SIGKILL'), ms)
      const code = await exited
      clearTimeout(timer)
      rl.close()
      return code
    },
  }
}

/** A request's messages, or none. */
function messagesOf(asked: Asked): { role: string; content: unknown }[] {
  const m = asked.body?.messages
  return Array.isArray(m) ? (m as { role: string; content: unknown }[]) : []
}

const blocksOf = (content: unknown): Record<string, unknown>[] =>
  typeof content === 'string'
    ? [{ type: 'text', text: content }]
    : Array.isArray(content)
      ? (content as Record<string, unknown>[])
      : []

/** The text of a tool_result block (its string content, or its text blocks joined). */
function resultText(block: Record<string, unknown>): string {
  return blocksOf(block.content)
    .map((b) => (typeof b.text === 'string' ? b.text : ''))
    .join('')
}

/** The tool names a request declares. */
export function declaredTools(body: Record<string, unknown> | undefined): string[] {
  const tools = body?.tools
  return Array.isArray(tools) ? tools.map((t) => String((t as { name?: unknown }).name)) : []
}

/** The summary a compaction request is answered with (the form Claude Code's prompt asks for). */
export const COMPACTION_SUMMARY =
  '<analysis>Nothing to analyse.</analysis>\n<summary>The user asked for tools; they ran.</summary>'

/** Claude Code's compaction request: its last user turn asks for a summary of the conversation. */
export function isCompaction(asked: Pick<Asked, 'body'>): boolean {
  const last = messagesOf(asked as Asked)
    .filter((m) => m.role === 'user')
    .at(-1)
  return blocksOf(last?.content).some(
    (b) => typeof b.text === 'string' && b.text.includes('create a detailed summary of the conversation'),
  )
}

/**
 * A scripted model: the last message decides. A user turn whose text holds
 * `run-tool <tool> <json input>` (on one line) is answered with that `tool_use` when the request declares the tool
 * (else with text, so a side request that quotes the turn gets no tool call); a tool result is
 * answered `done: <result text>`; anything else `ok`. Every tool call it makes is logged.
 */
export function scriptedModel(): { answer: (asked: Asked) => Script | undefined; calls: ScriptedToolCall[] } {
  const calls: ScriptedToolCall[] = []
  const answer = (asked: Asked): Script | undefined => {
    if (asked.path !== '/v1/messages') return undefined
    // Claude Code 2.1 may end with `system` messages (its mid-conversation-system beta): skip them.
    const last = messagesOf(asked)
      .filter((m) => m.role !== 'system')
      .at(-1)
    if (!last || last.role !== 'user') return { text: 'ok' }
    const blocks = blocksOf(last.content)
    const result = blocks.find((b) => b.type === 'tool_result')
    if (result && !isCompaction(asked)) return { text: `done: ${resultText(result).slice(0, 400)}` }
    const text = blocks.map((b) => (b.type === 'text' && typeof b.text === 'string' ? b.text : '')).join('\n')
    if (isCompaction(asked)) return { text: COMPACTION_SUMMARY }
    const m = /\brun-tool (\S+) (\{.*\})/.exec(text)
    if (!m || !declaredTools(asked.body).includes(m[1] as string)) return { text: 'ok' }
    const call: ScriptedToolCall = {
      name: m[1] as string,
      arguments: JSON.parse(m[2] as string) as Record<string, unknown>,
    }
    calls.push(call)
    return { toolCalls: [call] }
  }
  return { answer, calls }
}
