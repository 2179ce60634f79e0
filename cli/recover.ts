/**
 * `holdfast recover <ws>`: commit whatever of a workspace can be committed now — journal steps a
 * disk fault kept from their commit, and entries an older holdfast left in quarantine — and print
 * what it did. With a running serve, its commit worker does it (`POST /_holdfast/recover`);
 * without one, this command takes the home lock and runs recovery itself. Invariant: it deletes
 * nothing that is not on a branch; what still cannot be committed stays, and is named.
 */
import { askRunningServe } from './lookup'
import type { Command } from 'commander'
import { assertName, formatStep } from '../proxy/core/naming'
import { loadConfig } from '../proxy/store/config'
import { resolveHome } from '../proxy/store/home'
import { readServeInfo, takeHomeLock } from '../proxy/store/serve-lock'
import { hookPreparer } from '../proxy/store/hook-install'
import { Workspace } from '../proxy/store/workspace'
import { createLogger } from '../proxy/process/log'
import { type Brought, describeRecovery, recoverQuarantine, recoverWorkspace } from '../proxy/record/recover'
import { CliError, printJson } from './output'

interface Opts {
  home?: string
  json?: boolean
  waitMs?: string
}

const broughtLine = (ws: string, b: Brought): string =>
  `${ws}/${b.agent}: step ${formatStep(b.n)} brought back from quarantine onto agents/${b.to}`

/** Ask the running serve; its answer as printed lines (and the JSON). */
async function viaServe(
  home: string,
  ws: string,
  waitMs: number,
): Promise<{ lines: string[]; json: unknown; ok: boolean }> {
  const json = await askRunningServe<{
    requeued: { agent: string; steps: number }[]
    brought: Brought[]
    refused: string[]
    landed: boolean
    faults: { since: string; error: string; waiting: number }[]
    agents: { agent: string; committed: number; stalled: string | null }[]
  }>(home, '/_holdfast/recover', {
    body: { workspace: ws, wait_ms: waitMs },
  })
  const lines = [
    ...json.requeued.map(
      (r) => `${ws}/${r.agent}: ${r.steps} step(s) from the journal queued for commit again`,
    ),
    ...json.brought.map((b) => broughtLine(ws, b)),
    ...json.refused.map((r) => `not brought back: ${r}`),
    ...json.faults.map(
      (f) => `${ws}: ${f.waiting} step(s) still wait for the disk (since ${f.since}): ${f.error}`,
    ),
    ...json.agents.filter((a) => a.stalled).map((a) => `${ws}/${a.agent}: commit failed: ${a.stalled}`),
  ]
  const ok = json.faults.length === 0 && json.refused.length === 0 && json.agents.every((a) => !a.stalled)
  if (lines.length === 0) lines.push(`${ws}: nothing to recover (every step is on its branch)`)
  return { lines, json, ok }
}

/** No serve: take the home lock and recover here. */
async function locally(home: string, ws: string): Promise<{ lines: string[]; json: unknown; ok: boolean }> {
  let release
  try {
    release = takeHomeLock(home)
  } catch (err) {
    throw new CliError((err as Error).message)
  }
  try {
    const config = loadConfig(home)
    const workspace = new Workspace(home, ws, {
      durable: config.journal?.fsync === true,
      prepare: hookPreparer(),
    })
    if (!workspace.exists()) throw new CliError(`no workspace "${ws}" in ${home}`)
    const r = await recoverWorkspace(workspace, createLogger('silent'), config.prices)
    const q = await recoverQuarantine(workspace)
    const lines = [
      ...describeRecovery(ws, r).map((l) => l.line),
      ...q.brought.map((b) => broughtLine(ws, b)),
      ...q.refused.map((x) => `not brought back: ${x}`),
    ]
    if (lines.length === 0) lines.push(`${ws}: nothing to recover (every step is on its branch)`)
    return {
      lines,
      json: { ...r, brought: q.brought, refused: q.refused },
      ok: r.waiting.length === 0 && q.refused.length === 0,
    }
  } finally {
    release()
  }
}

export function registerRecover(program: Command): void {
  program
    .command('recover')
    .description('commit what a disk fault or a crash left uncommitted (journal, quarantine), and say what')
    .argument('<ws>', 'workspace')
    .option('--home <dir>', 'holdfast home (default $HOLDFAST_HOME, then ~/.holdfast)')
    .option('--wait-ms <ms>', 'with a running serve: how long to wait for the commits to land', '10000')
    .option('--json', 'print what was done as JSON')
    .action(async (wsName: string, opts: Opts) => {
      const home = resolveHome(opts.home)
      const ws = assertName('workspace', wsName)
      const serve = readServeInfo(home)
      const waitMs = Number(opts.waitMs ?? 10_000)
      if (!Number.isFinite(waitMs) || waitMs < 0)
        throw new CliError(`--wait-ms ${opts.waitMs}: not a number of ms`)
      const r = serve ? await viaServe(home, ws, waitMs) : await locally(home, ws)
      if (opts.json) printJson(r.json)
      else for (const line of r.lines) process.stdout.write(`${line}\n`)
      if (!r.ok) process.exitCode = 1
    })
}
