/**
 * Helpers for the tool-host tests: the stdio fixture host as a `clients` entry, a config carrying
 * clients, a logger whose lines the test can read, and a ToolHosts that is always closed.
 * Invariant: every ToolHosts made with `hostsFor` is closed by `closeAll` (children killed).
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Writable } from 'node:stream'
import pino from 'pino'
import { buildProgram } from '../../../cli/program'
import { CliError } from '../../../cli/output'
import type { Client } from '../../../generated/holdfast'
import type { HoldfastConfig } from '../../../proxy/store/config'
import { ToolHosts, type HostTimings } from '../../../proxy/tools/hosts'
import { REGISTER, ROOT } from '../../support/harness'

export const STDIO_HOST = path.join(ROOT, 'test', 'fixtures', 'mcp', 'stdio-host.ts')

/** The stdio fixture host with these FIXTURE_* variables (and any others) in its env. */
export function stdioClient(env: Record<string, string> = {}, extra: Partial<Client> = {}): Client {
  return { mcp: { command: process.execPath, args: ['-r', REGISTER, STDIO_HOST], env }, ...extra }
}

export function configWith(clients: Record<string, Client>): HoldfastConfig {
  return {
    listen: { host: '127.0.0.1', port: 0 },
    defaults: { workspace: 'default', agent: 'main' },
    providers: {},
    clients,
  }
}

export interface Captured {
  log: pino.Logger
  lines: Record<string, unknown>[]
}

/** A debug-level logger whose JSON lines land in `lines`. */
export function capturingLogger(): Captured {
  const lines: Record<string, unknown>[] = []
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n'))
        if (l) lines.push(JSON.parse(l) as Record<string, unknown>)
      done()
    },
  })
  return { log: pino({ level: 'debug' }, sink), lines }
}

export function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-tools-'))
}

const open: ToolHosts[] = []
const dirs: string[] = []

/** A ToolHosts over a fresh home (or `home`); closed by `closeAll`. */
export function hostsFor(
  clients: Record<string, Client>,
  opts: { home?: string; log?: pino.Logger; timings?: HostTimings } = {},
): ToolHosts {
  const home = opts.home ?? tempDir()
  if (!opts.home) dirs.push(home)
  const config = configWith(clients)
  const hosts = new ToolHosts(home, () => config, opts.log ?? pino({ level: 'silent' }), opts.timings)
  open.push(hosts)
  return hosts
}

export async function closeAll(): Promise<void> {
  await Promise.all(open.splice(0).map((h) => h.close()))
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true })
}

/** The text of a tool result's first block. */
export const textOf = (r: { content: unknown[] }): string => (r.content[0] as { text: string }).text

/** True while a process with this pid exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/**
 * Run the `holdfast` program in this process (as `main` would: a refusal is one stderr line and
 * exit 1), capturing what it writes. Cheaper than a spawn; one run at a time.
 */
export async function cliInProcess(
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = []
  const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out.push(chunk.toString())
    return true
  })
  try {
    await buildProgram().parseAsync(['node', 'holdfast', ...args])
    return { code: 0, stdout: out.join(''), stderr: '' }
  } catch (err) {
    if (!(err instanceof CliError)) throw err
    return { code: err.exitCode, stdout: out.join(''), stderr: `holdfast: ${err.message}\n` }
  } finally {
    write.mockRestore()
  }
}
