/**
 * The remote as a backup that works: this machine's own agents, as the remote holds them, are
 * fetched into `refs/remotes/holdfast/own/<form>/<agent>` (never over `agents/*`), and compared
 * with the local branches. A branch the remote's extends (a power cut took commits here that were
 * pushed) is fast-forwarded to it: the commits are this machine's own, byte for byte. Histories
 * that diverged are both kept: the remote's where it is, this branch's pushed beside it
 * (refs.sideRef), said in `remote/push.json` (`diverged`), health, `holdfast remote show` and the
 * log. Invariant: a local branch moves only by a fast-forward to a commit of its own agent, by
 * compare-and-swap with a reflog line (HEAL_REFLOG_PREFIX); only at a start, before anything is
 * numbered or committed; nothing here is on a request's path.
 */
import { agentRef, AGENTS_PREFIX, stepOfSubject } from '../core/layout'
import { formatStep } from '../core/naming'
import type { Logger } from '../process/log'
import {
  casRef,
  HEAL_REFLOG_PREFIX,
  highestInReflog,
  isAncestor,
  listRefs,
  mergeBase,
  readCommitInfo,
  readRef,
} from '../store/git'
import type { Workspace } from '../store/workspace'
import { failure, RemoteUrl, runGitIn } from './git'
import {
  ownRefspecs,
  ownTrackingRef,
  OWN_TRACKING_PREFIX,
  REMOTE,
  type RefForm,
  shownUrl,
  sideRef,
} from './refs'
import {
  type Diverged,
  divergedSentence,
  pushStateFor,
  type PushState,
  readPushState,
  stepName,
  writePushState,
} from './state'

/** A tip and the step its commit records (0: none of the agent's). */
export interface Tip {
  commit: string
  step: number
}

/** The step `commit` records for `agent`, 0 when it is no step commit of it or cannot be read. */
async function stepOf(ws: Workspace, agent: string, commit: string): Promise<number> {
  try {
    const s = stepOfSubject((await readCommitInfo(ws.repo, commit)).message)
    return s?.agent === agent ? s.n : 0
  } catch {
    return 0
  }
}

/** Fetch this machine's own agents into their tracking refs, as a pack (no loose objects); why it failed. */
export async function fetchOwn(
  ws: Workspace,
  machine: string,
  timeoutMs: number,
  /** `timeoutMs` counts time without progress (else in all). */
  idle = true,
): Promise<string | undefined> {
  const r = await runGitIn(
    ws.repo.gitdir,
    [
      '-c',
      'fetch.unpackLimit=1',
      'fetch',
      '--progress',
      '--no-tags',
      '--no-write-fetch-head',
      '--prune',
      '--refmap=',
      REMOTE,
      ...ownRefspecs(machine),
    ],
    { timeoutMs, idle, remote: true },
  )
  return r.code === 0 ? undefined : failure(r, timeoutMs)
}

/** The remote's tip of `agent` as last fetched here: the `form` pushed to first, then the other. */
export async function remoteTip(ws: Workspace, agent: string, form: RefForm): Promise<Tip | undefined> {
  for (const f of [form, form === 'custom' ? 'heads' : 'custom'] as const) {
    const commit = await readRef(ws.repo, ownTrackingRef(f, agent)).catch(() => undefined)
    if (commit) return { commit, step: await stepOf(ws, agent, commit) }
  }
  return undefined
}

/** The highest step the remote's copies of `agent` record, as last fetched here (0: none known). */
export async function remoteHighest(ws: Workspace, agent: string): Promise<number> {
  let max = 0
  for (const form of ['custom', 'heads'] as const) {
    const commit = await readRef(ws.repo, ownTrackingRef(form, agent)).catch(() => undefined)
    if (commit) max = Math.max(max, await stepOf(ws, agent, commit))
  }
  return max
}

/** How a local branch stands to the remote's copy of it. */
export type Standing =
  { kind: 'same' | 'ahead' } | { kind: 'behind' } | { kind: 'diverged'; base: number; local: number }

/** Compare the local tip (undefined: no branch) with the remote's; `behind` includes no branch at all. */
export async function standing(
  ws: Workspace,
  agent: string,
  local: string | undefined,
  remote: Tip,
): Promise<Standing> {
  if (local === remote.commit) return { kind: 'same' }
  const ancestor = (a: string, b: string): Promise<boolean> => isAncestor(ws.repo, a, b).catch(() => false)
  // Only a step commit of this agent is taken: anything else under our name is not our record.
  if (remote.step > 0 && (local === undefined || (await ancestor(local, remote.commit))))
    return { kind: 'behind' }
  if (local !== undefined && (await ancestor(remote.commit, local))) return { kind: 'ahead' }
  const base = local && (await mergeBase(ws.repo, local, remote.commit).catch(() => undefined))
  return {
    kind: 'diverged',
    base: base ? await stepOf(ws, agent, base) : 0,
    local: local ? await stepOf(ws, agent, local) : 0,
  }
}

/** The record of a divergence found now (its side ref kept when the base is the one seen before). */
export function divergence(
  state: PushState,
  agent: string,
  s: { base: number; local: number },
  remote: Tip,
  at: string,
): Diverged {
  const side = sideRef(state.machine, agent, stepName(s.base), state.form)
  const was = state.diverged?.[agent]
  return {
    base_step: s.base,
    remote_step: remote.step,
    remote_commit: remote.commit,
    local_step: s.local,
    side_ref: side,
    pushed: was?.side_ref === side ? was.pushed : null,
    at,
  }
}

/** Whether anything local says the remote may hold steps of `agent` this branch lacks. */
async function suspect(ws: Workspace, agent: string, state: PushState | undefined): Promise<boolean> {
  const committed = await ws.committedSteps(agent).catch(() => 0)
  const pushed = state?.agents[agent]?.step ?? 0
  const told = Math.max(
    pushed,
    highestInReflog(ws.repo.gitdir, agentRef(agent)),
    await remoteHighest(ws, agent),
  )
  return told > committed
}

/**
 * How long a start waits for the remote when nothing local suspects a loss (a cut with
 * `journal.fsync: false` can take every local trace of it: only the remote knows then).
 */
export const CHECK_MS = 10_000

export interface HealOptions {
  machine: string
  refs: 'auto' | RefForm
  /** The limit without progress of a fetch that something local asks for (remote.timeout_s). */
  timeoutMs: number
}

/** Compare one agent's branch with the remote's copy: fast-forward it, or record the divergence. */
async function healOne(
  ws: Workspace,
  state: PushState,
  agent: string,
  local: string | undefined,
  at: string,
  log: Logger,
): Promise<void> {
  const remote = await remoteTip(ws, agent, state.form)
  if (!remote) return
  const s = await standing(ws, agent, local, remote)
  const diverged = state.diverged as Record<string, Diverged>
  if (s.kind === 'diverged') {
    diverged[agent] = divergence(state, agent, s, remote, at)
    log.warn({ ws: ws.name, agent }, `${ws.name}/${divergedSentence(agent, diverged[agent])}`)
    return
  }
  delete diverged[agent]
  if (s.kind !== 'behind') return
  const from = local ? await stepOf(ws, agent, local) : 0
  const subject = (await readCommitInfo(ws.repo, remote.commit)).message.split('\n')[0] as string
  await casRef(ws.repo, agentRef(agent), remote.commit, local ?? null, {
    durable: ws.options.durable,
    reflog: `${HEAL_REFLOG_PREFIX}${subject}`,
  })
  const healed = { from_step: from, to_step: remote.step, commit: remote.commit, at }
  ;(state.healed as NonNullable<PushState['healed']>)[agent] = healed
  state.agents[agent] ??= { step: remote.step, commit: remote.commit, at }
  log.warn(
    { ws: ws.name, agent, from: stepName(from), to: formatStep(remote.step) },
    `${ws.name}/${agent}: fetched back steps ${formatStep(from + 1)}–${formatStep(remote.step)} from ${REMOTE} (this machine's own commits, which a power cut took here); the branch goes on from ${formatStep(remote.step)}`,
  )
}

/**
 * At a start, before the journal's steps are committed and before any step is numbered: fetch
 * this machine's agents back from the remote and fast-forward each branch the remote's copy
 * extends; record what diverged. When something local (push.json, the reflog, the tracking refs)
 * says a branch is behind, the fetch may take `timeoutMs` without progress; otherwise CHECK_MS in
 * all. Without a remote nothing runs. Never throws: a fetch that fails leaves the branches as they
 * are (numbering then reserves what the remote was told, live/agents), and says so.
 */
export async function healAtStart(ws: Workspace, opts: HealOptions, log: Logger): Promise<void> {
  try {
    const url = await new RemoteUrl(ws.repo.gitdir).get()
    if (!url) return
    const saved = readPushState(ws.home, ws.name)
    const locals = new Map(
      (await listRefs(ws.repo, AGENTS_PREFIX)).map((r) => [r.ref.slice(AGENTS_PREFIX.length), r.oid]),
    )
    let suspected = false
    for (const agent of new Set([...locals.keys(), ...Object.keys(saved?.agents ?? {})]))
      suspected ||= await suspect(ws, agent, saved)
    const error = await fetchOwn(ws, opts.machine, suspected ? opts.timeoutMs : CHECK_MS, suspected)
    if (error) {
      if (suspected)
        log.warn(
          { ws: ws.name },
          `${ws.name}: a branch here is behind what was pushed to ${REMOTE}, and fetching it back failed (${error}); new steps are numbered after the remote's, and the histories are kept side by side once the remote answers`,
        )
      else log.info({ ws: ws.name }, `${ws.name}: could not compare the branches with ${REMOTE} (${error})`)
      return
    }
    const state = pushStateFor(saved, shownUrl(url), opts.machine, opts.refs)
    const tracked = (await listRefs(ws.repo, OWN_TRACKING_PREFIX)).map(
      (r) => r.ref.split('/').pop() as string,
    )
    const at = new Date().toISOString()
    for (const agent of new Set([...locals.keys(), ...tracked]))
      await healOne(ws, state, agent, locals.get(agent), at, log).catch((err: unknown) =>
        log.warn(
          { ws: ws.name, agent, err: String(err) },
          `${ws.name}/${agent}: comparing with ${REMOTE} failed`,
        ),
      )
    await writePushState(ws.home, ws.name, state)
  } catch (err) {
    log.warn({ ws: ws.name, err: String(err) }, `${ws.name}: comparing the branches with ${REMOTE} failed`)
  }
}

/**
 * While serving: the remote refused `agents` as not a fast-forward. Fetch its copies and compare:
 * a history that diverged is recorded (`state.diverged`) and its agent returned, to be pushed to
 * its side ref at once; a remote that holds this branch and more is said (the next start fetches
 * it back). Never throws; a fetch that fails leaves the refusal as it was, tried again at the
 * agent's next commit.
 */
export async function settleRefused(
  ws: Workspace,
  state: PushState,
  agents: readonly { agent: string; commit: string }[],
  opts: { timeoutMs: number },
  log: Logger,
): Promise<string[]> {
  const again: string[] = []
  try {
    const error = await fetchOwn(ws, state.machine, opts.timeoutMs)
    if (error) return again
    const at = new Date().toISOString()
    for (const { agent, commit } of agents) {
      const remote = await remoteTip(ws, agent, state.form)
      if (!remote) continue
      const s = await standing(ws, agent, commit, remote)
      const refused = state.refused[agent]
      if (s.kind === 'diverged') {
        const d = divergence(state, agent, s, remote, at)
        ;(state.diverged as Record<string, Diverged>)[agent] = d
        delete state.refused[agent]
        log.warn({ ws: ws.name, agent }, `${ws.name}/${divergedSentence(agent, d)}`)
        again.push(agent)
      } else if (s.kind === 'behind' && refused)
        refused.reason = `the remote holds this branch and more (up to step ${formatStep(remote.step)}): nothing here it lacks; the next start fetches them back`
      else if (s.kind !== 'behind') again.push(agent) // it moved meanwhile: the next push tells
    }
  } catch (err) {
    log.warn({ ws: ws.name, err: String(err) }, `${ws.name}: comparing the branches with ${REMOTE} failed`)
  }
  return again
}
