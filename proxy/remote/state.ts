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
import { formatStep } from '../core/naming'
import { agentOfRemoteRef, agentOfSideRef, type PushLine, type RefForm } from './refs'

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
  /**
   * Agents whose history on the remote diverged from this branch: both are kept, the remote's
   * where it was, this branch's steps pushed beside it to `side_ref` (pushed up to `pushed`).
   */
  diverged?: Record<string, Diverged>
  /** Agents a start fast-forwarded from the remote (their own commits a cut took here), last time. */
  healed?: Record<string, { from_step: number; to_step: number; commit: string; at: string }>
  last_ok_at: string | null
  last_error: string | null
}

export interface Diverged {
  /** The last step both histories share, and each side's tip. */
  base_step: number
  remote_step: number
  remote_commit: string
  local_step: number
  side_ref: string
  /** This branch's tip as pushed to side_ref, when it was. */
  pushed: { step: number; commit: string } | null
  at: string
}

/** A step as the sentences name it: `003`, or `000` for none (a history shares no step, or holds none). */
export const stepName = (n: number): string => (n > 0 ? formatStep(n) : '000')

/** One sentence for a diverged agent (health, remote show, the log). */
export function divergedSentence(agent: string, d: Diverged): string {
  const split = d.base_step > 0 ? `after step ${formatStep(d.base_step)}` : 'from their first step'
  return `${agent}: the remote's history (up to step ${stepName(d.remote_step)}) and this machine's (up to ${stepName(d.local_step)}) diverged ${split}; both are kept: the remote's where it was, this machine's ${d.pushed ? `pushed up to step ${stepName(d.pushed.step)}` : 'pushed'} to ${d.side_ref}`
}

/**
 * The state to push with: `existing` while it is for the same remote (its URL as shown) and
 * machine, else a fresh one (a new remote holds nothing of ours). `refs` other than auto sets the
 * form; auto keeps the form found (custom until the remote refused it).
 */
export function pushStateFor(
  existing: PushState | undefined,
  url: string,
  machine: string,
  refs: 'auto' | RefForm,
): PushState {
  const state: PushState =
    existing?.url === url && existing.machine === machine
      ? existing
      : { url, machine, form: 'custom', agents: {}, refused: {}, last_ok_at: null, last_error: null }
  if (refs !== 'auto') state.form = refs
  state.diverged ??= {}
  state.healed ??= {}
  return state
}

/** A refusal `recordPush` found: `first` when the agent was not refused before (worth a warning). */
export interface Refusal {
  agent: string
  step: number
  reason: string
  first: boolean
  /** Refused as not a fast-forward of the agent's own ref (not a side ref): worth comparing. */
  diverging: boolean
}

/**
 * Apply one push's per-ref lines to the state: an agent pushed (or already there) is recorded up
 * to the step it carried, and no longer refused; one the remote refused is recorded with why.
 * `sent` is what the push carried, by agent. Returns the refusals.
 */
export function recordPush(
  state: PushState,
  sent: ReadonlyMap<string, { step: number; commit: string }>,
  lines: readonly PushLine[],
  at: string,
): Refusal[] {
  const refusals: Refusal[] = []
  state.last_ok_at = at
  state.last_error = null
  for (const line of lines) {
    const side = agentOfSideRef(line.dst, state.machine)
    const agent = side ?? agentOfRemoteRef(line.dst, state.machine)
    const carried = agent === undefined ? undefined : sent.get(agent)
    if (agent === undefined || !carried) continue
    const diverged = side === undefined ? undefined : state.diverged?.[side]
    if (diverged && (line.outcome === 'pushed' || line.outcome === 'up-to-date')) {
      diverged.pushed = { step: carried.step, commit: carried.commit }
      delete state.refused[agent]
      continue
    }
    if (line.outcome === 'pushed' || line.outcome === 'up-to-date') {
      state.agents[agent] = { ...carried, at }
      delete state.refused[agent]
      continue
    }
    const reason =
      line.outcome === 'not-fast-forward'
        ? `the remote's ${line.dst} has commits this branch does not: not a fast-forward; fetching the remote's to keep both`
        : `the remote refused ${line.dst}: ${line.summary}`
    refusals.push({
      agent,
      step: carried.step,
      reason,
      first: state.refused[agent] === undefined,
      diverging: line.outcome === 'not-fast-forward' && side === undefined,
    })
    state.refused[agent] = { ...carried, reason, at }
  }
  return refusals
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
