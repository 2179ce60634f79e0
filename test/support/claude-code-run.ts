/**
 * One Claude Code session through `holdfast run`, as a user starts it: `holdfast run --ws cc --
 * claude -p …` in stream-json, the serve started by the run (against the fake upstream and its
 * scripted model), Claude Code connected to holdfast's MCP endpoint (by run) and to a stdio MCP
 * server of its own (`box`, which can drop tools). Turns are sent one by one; the steps of `main`
 * are read from the records as they land. Invariant: `close()` ends Claude Code, the run and the
 * serve it started (every step committed); loopback only.
 */
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { CliError } from '../../cli/output'
import { stepRows, type StepRow } from '../../cli/steps'
import type { StepMeta } from '../../generated/meta'
import type { JsonObject } from '../../proxy/core/json'
import { readStepMeta, readStepRequest } from '../../proxy/record/read'
import { Workspace } from '../../proxy/store/workspace'
import { claudeBinary, type ClaudePackage, claudeEnv, type ClaudeSession, startClaude } from './claude-code'
import type { FakeUpstream } from './fake-upstream'
import { CLI, configFor, REGISTER, tempHome, writeConfig } from './harness'
import { cliInProcess, STDIO_HOST, stdioClient } from '../proxy/tools/support'

export const WS = 'cc'

/** One user turn: the steps of `main` it began and ended with, and what Claude Code listed at its start. */
export interface Turn {
  text: string
  from: number
  to: number
  tools: string[]
  servers: { name: string; status: string }[]
  /** The texts of the tool results the model got in this turn. */
  results: string[]
}

export interface RunSession {
  home: string
  dir: string
  /** The stdio host's call log (`box`, the holdfast client). */
  calls: string
  say(text: string): Promise<Turn>
  /** One more `holdfast run -- claude <args>` in the same directory, its stdin closed; resolves at its exit. */
  once(args: string[]): Promise<{ code: number | null; output: string }>
  until(text: string, ok: (t: Turn) => boolean, tries?: number): Promise<Turn>
  close(): Promise<number | null>
  rows(): Promise<StepRow[]>
  meta(n: number): Promise<StepMeta>
  request(n: number): Promise<JsonObject>
  cli(...args: string[]): Promise<string>
}

const nnn = (n: number): string => String(n).padStart(3, '0')

function resultTexts(events: { type: string; [k: string]: unknown }[]): string[] {
  const out: string[] = []
  for (const e of events) {
    if (e.type !== 'user') continue
    const content = (e.message as { content?: unknown } | undefined)?.content
    if (!Array.isArray(content)) continue
    for (const b of content as { type?: string; content?: unknown }[]) {
      if (b.type !== 'tool_result') continue
      const c = b.content
      out.push(
        typeof c === 'string'
          ? c
          : Array.isArray(c)
            ? (c as { text?: string }[]).map((x) => x.text ?? '').join('')
            : '',
      )
    }
  }
  return out
}

export function startRunSession(pkg: ClaudePackage, fake: FakeUpstream, allowed: string[]): RunSession {
  const bin = claudeBinary(undefined, pkg) // throws, naming the package, when npm did not install it
  const dir = tempHome()
  const home = path.join(dir, 'holdfast')
  const calls = path.join(dir, 'box-calls.jsonl')
  fs.mkdirSync(home)
  // The row asks the provider (diagnostics: add): 2.1.332 sends diagnostics only behind a flag of
  // its own, and every step's cause then has the provider's word beside holdfast's.
  const config = configFor(fake)
  writeConfig(home, {
    ...config,
    providers: { ...config.providers, anthropic: { ...config.providers.anthropic!, diagnostics: 'add' } },
    clients: { box: { ...stdioClient({ FIXTURE_CALL_LOG: calls }), workspaces: [WS] } },
  })
  const own = {
    mcpServers: {
      box: {
        type: 'stdio',
        command: process.execPath,
        args: ['-r', REGISTER, STDIO_HOST],
        env: { FIXTURE_LIST_CHANGED: '1' },
      },
    },
  }
  const cwd = path.join(dir, 'work')
  fs.mkdirSync(cwd)
  const env = claudeEnv(path.join(dir, 'home'), undefined)
  const via = [process.execPath, '-r', REGISTER, CLI, 'run', '--home', home, '--ws', WS, '--']
  const claude: ClaudeSession = startClaude({
    bin,
    cwd,
    env,
    // -p asks no one: the tools the script calls are allowed by name (no bypass, which root may not use).
    args: ['--mcp-config', JSON.stringify(own), '--allowedTools', allowed.join(',')],
    via,
  })
  const ws = new Workspace(home, WS)
  const rows = async (): Promise<StepRow[]> => {
    if (!fs.existsSync(path.join(home, 'workspaces', WS))) return []
    try {
      return await stepRows(home, WS, 'main')
    } catch (err) {
      // No agent main yet: none of its steps. Anything else is a fault the turn must not hide.
      if (err instanceof CliError && /^no (agent "main"|workspace "cc") in /.test(err.message)) return []
      throw err
    }
  }
  const say = async (text: string): Promise<Turn> => {
    const from = (await rows()).length + 1
    const events = await claude.turn(text, 180_000)
    const last = events.at(-1) as { type: string; subtype?: string }
    if (last.type !== 'result' || last.subtype !== 'success')
      throw new Error(
        `turn ${JSON.stringify(text)} ended ${JSON.stringify(last)}; stderr: ${claude.stderr().slice(-2000)}`,
      )
    const init = events.find((e) => e.type === 'system' && e.subtype === 'init') as
      { tools?: string[]; mcp_servers?: Turn['servers'] } | undefined
    return {
      text,
      from,
      to: (await rows()).length,
      tools: init?.tools ?? [],
      servers: init?.mcp_servers ?? [],
      results: resultTexts(events),
    }
  }
  return {
    home,
    dir,
    calls,
    say,
    async until(text, ok, tries = 20) {
      for (let i = 1; ; i++) {
        const t = await say(text)
        if (ok(t)) return t
        if (i === tries)
          throw new Error(`after ${tries} turns of ${JSON.stringify(text)}: ${JSON.stringify(t)}`)
        await new Promise((r) => setTimeout(r, 300))
      }
    },
    close: () => claude.close(120_000),
    once(args) {
      const [cmd, ...rest] = [...via, bin, ...args] as [string, ...string[]]
      const child = spawn(cmd, rest, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
      let output = ''
      child.stdout.on('data', (d: Buffer) => (output += d.toString()))
      child.stderr.on('data', (d: Buffer) => (output += d.toString()))
      const timer = setTimeout(() => child.kill('SIGKILL'), 180_000)
      return new Promise((resolve) =>
        child.once('close', (code) => {
          clearTimeout(timer)
          resolve({ code, output })
        }),
      )
    },
    rows,
    async meta(n) {
      const m = await readStepMeta(ws, 'main', n)
      if (!m) throw new Error(`no meta.json for step ${nnn(n)}`)
      return m
    },
    async request(n) {
      const r = await readStepRequest(ws, 'main', n)
      if (!r) throw new Error(`no request.json for step ${nnn(n)}`)
      return r.body
    },
    async cli(...args) {
      const r = await cliInProcess([...args, '--home', home])
      if (r.code !== 0) throw new Error(`holdfast ${args.join(' ')}: ${r.stderr}`)
      return r.stdout
    },
  }
}
