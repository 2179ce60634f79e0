/**
 * What the remote did, on disk, for commands that run without the server: `<home>/workspaces/<ws>/
 * remote/push.json` (written by serve's pusher: each agent pushed up to which step, refusals, the
 * last error) and `remote/config.json` (written by whoever pulled config last: each lineage's
 * outcome). Invariant: each file has one kind of writer and is replaced atomically; an absent or
 * unreadable file reads as undefined (the state is a report, the refs are the truth).
 */
import fs from 'node:fs'
import path from 'node:path'
import { writeFileAtomic } from '../store/atomic'
import { homePaths } from '../store/home'
import type { RefForm } from './refs'

export interface PushedAgent {
  step: number
  commit: string
  at: string
}

export interface PushState {
  /** The remote's URL as shown (no password), and this machine's name there. */
  url: string
  machine: string
  form: RefForm
  agents: Record<string, PushedAgent>
  /** Agents the remote refused (not a fast-forward, or its own rule), with git's reason. */
  refused: Record<string, { step: number; commit: string; reason: string; at: string }>
  last_ok_at: string | null
  last_error: string | null
}

export type LineageOutcome = 'up-to-date' | 'created' | 'moved' | 'ahead' | 'diverged' | 'refused' | 'failed'

export interface LineageResult {
  lineage: string
  outcome: LineageOutcome
  /** The local tip before, and the remote's tip. */
  local: string | null
  remote: string
  /** Why it did not move (refused, diverged, failed), in one sentence. */
  reason?: string
}

export interface PullReport {
  at: string
  url: string
  /** The fetch itself failed: nothing moved; `error` says why. */
  error: string | null
  lineages: LineageResult[]
}

const dir = (home: string, ws: string): string => path.join(homePaths.workspace(home, ws), 'remote')
export const pushStatePath = (home: string, ws: string): string => path.join(dir(home, ws), 'push.json')
export const pullReportPath = (home: string, ws: string): string => path.join(dir(home, ws), 'config.json')

function readJson<T>(file: string): T | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as T
  } catch {
    return undefined
  }
}

export const readPushState = (home: string, ws: string): PushState | undefined =>
  readJson<PushState>(pushStatePath(home, ws))
export const readPullReport = (home: string, ws: string): PullReport | undefined =>
  readJson<PullReport>(pullReportPath(home, ws))

export async function writePushState(home: string, ws: string, state: PushState): Promise<void> {
  await writeFileAtomic(pushStatePath(home, ws), `${JSON.stringify(state, null, 2)}\n`)
}

export async function writePullReport(home: string, ws: string, report: PullReport): Promise<void> {
  await writeFileAtomic(pullReportPath(home, ws), `${JSON.stringify(report, null, 2)}\n`)
}

/** The lineages a report says did not follow the remote (diverged, refused, failed), as sentences. */
export function pullRefusals(report: PullReport | undefined): string[] {
  if (!report) return []
  if (report.error) return [`remote ${REMOTE_SHOWN(report)}: fetch failed at ${report.at}: ${report.error}`]
  return report.lineages
    .filter((l) => l.outcome === 'diverged' || l.outcome === 'refused' || l.outcome === 'failed')
    .map(
      (l) =>
        `remote ${REMOTE_SHOWN(report)}: config/${l.lineage} stays at ${l.local?.slice(0, 8) ?? '(none)'}, not ${l.remote.slice(0, 8)}: ${l.reason ?? l.outcome}`,
    )
}

const REMOTE_SHOWN = (r: PullReport): string => `holdfast (${r.url})`
