/**
 * One workspace's background pusher: its agents' branches go to the remote named `holdfast` as
 * `refs/holdfast/<machine>/agents/<agent>` (or `refs/heads/holdfast/…` where the remote refuses
 * other refs), by `git push` of the commits themselves, never forced. Commits coalesce: a push
 * starts `delayMs` after the first commit it carries, at most one is in flight, and what lands
 * meanwhile goes in the next. A push that cannot reach the remote is retried with doubling delays;
 * a ref the remote refuses (not a fast-forward) is reported and left alone until that agent's
 * next commit. Invariant: never on a request's path; local records are only read; the state
 * (health, `holdfast agents`) is in `remote/push.json` after every push.
 */
import type { Logger } from '../process/log'
import { AGENTS_PREFIX } from '../core/layout'
import { formatStep } from '../core/naming'
import { listRefs } from '../store/git'
import type { Workspace } from '../store/workspace'
import { failure, RemoteUrl, runGitIn } from './git'
import { settleRefused } from './heal'
import {
  parsePushPorcelain,
  type PushLine,
  pushRefspec,
  REMOTE,
  type RefForm,
  retryDelay,
  shownUrl,
} from './refs'
import { type PushState, pushStateFor, readPushState, recordPush, writePushState } from './state'

export interface PushOptions {
  machine: string
  /** auto: the custom form, falling back to heads when the remote refuses it. */
  refs: 'auto' | RefForm
  delayMs: number
  retryMinMs: number
  retryMaxMs: number
  timeoutMs: number
}

const AGENTS = AGENTS_PREFIX

/** A commit waiting to be pushed: the agent's step and its commit. */
interface Pending {
  step: number
  commit: string
}

export type PusherPhase = 'no-remote' | 'idle' | 'waiting' | 'pushing' | 'retrying'

export type PusherReport = {
  phase: PusherPhase
  url: string | null
  form: RefForm | null
  /** Agents with commits waiting for a push. */
  waiting: number
  /** Failed pushes in a row, and when the next is tried. */
  failures: number
  next_retry_at: string | null
} & Pick<PushState, 'agents' | 'refused' | 'diverged' | 'healed' | 'last_error' | 'last_ok_at'>

export class Pusher {
  private readonly url: RemoteUrl
  private readonly pending = new Map<string, Pending>()
  private state: PushState | undefined
  private timer: NodeJS.Timeout | undefined
  private running: Promise<void> | undefined
  private failures = 0
  private closed = false
  /** Stops the git push in flight (close, when its budget is spent). */
  private abort = new AbortController()
  /** The remote URL the last catch-up compared against (a new one means a new remote). */
  private caughtUp: string | undefined
  phase: PusherPhase = 'idle'
  nextRetryAt: number | undefined

  constructor(
    readonly ws: Workspace,
    private readonly opts: PushOptions,
    private readonly log: Logger,
  ) {
    this.url = new RemoteUrl(ws.repo.gitdir)
  }

  /** An agent's step `step` is committed as `commit`: push it (with whatever else lands) soon. */
  committed(agent: string, step: number, commit: string): void {
    this.pending.set(agent, { step, commit })
    // No remote, and the repository's config unchanged since: nothing to try (a stat, no timer).
    if (this.phase === 'no-remote' && !this.url.changed()) return
    this.schedule(this.opts.delayMs)
  }

  /** Look for agents whose branch the remote may lack (at start, after a remote was set) and push them. */
  sync(): void {
    this.caughtUp = undefined
    this.schedule(0)
  }

  /** What health shows. */
  get report(): PusherReport {
    const s = this.state
    return {
      phase: this.phase,
      url: s?.url ?? null,
      form: s?.form ?? null,
      waiting: this.pending.size,
      failures: this.failures,
      next_retry_at: this.nextRetryAt ? new Date(this.nextRetryAt).toISOString() : null,
      agents: s?.agents ?? {},
      refused: s?.refused ?? {},
      diverged: s?.diverged ?? {},
      healed: s?.healed ?? {},
      last_ok_at: s?.last_ok_at ?? null,
      last_error: s?.last_error ?? null,
    }
  }

  /** Arm the timer for a push in `ms`, unless one is running (it re-arms when done) or due as soon. */
  private schedule(ms: number): void {
    if (this.closed || this.running) return
    if (this.timer) {
      // a commit never hastens a push already waiting (it joins it), nor a retry's backoff
      if (ms >= this.opts.delayMs || (this.phase === 'retrying' && ms > 0)) return
      clearTimeout(this.timer)
    }
    if (this.phase !== 'retrying') this.phase = 'waiting'
    this.timer = setTimeout(() => {
      this.timer = undefined
      this.running = this.push(this.opts.timeoutMs).finally(() => this.afterPush())
    }, ms)
  }

  private afterPush(): void {
    this.running = undefined
    if (this.closed) return
    if (this.phase === 'retrying') this.schedule(Math.max(0, (this.nextRetryAt ?? 0) - Date.now()))
    else if (this.pending.size > 0 && this.phase !== 'no-remote') this.schedule(this.opts.delayMs)
  }

  /** The state for `url`: kept while the remote and machine are the same, else started afresh. */
  private stateFor(url: string): PushState {
    this.state ??= readPushState(this.ws.home, this.ws.name)
    this.state = pushStateFor(this.state, shownUrl(url), this.opts.machine, this.opts.refs)
    return this.state
  }

  /** Every agent branch whose tip differs from what was last pushed joins the pending set. */
  private async catchUp(state: PushState): Promise<void> {
    for (const { ref, oid } of await listRefs(this.ws.repo, AGENTS)) {
      const agent = ref.slice(AGENTS.length)
      const there = state.diverged?.[agent]?.pushed?.commit ?? state.agents[agent]?.commit
      if (there === oid || this.pending.has(agent)) continue
      this.pending.set(agent, { step: await this.ws.committedSteps(agent), commit: oid })
    }
  }

  /** One push; never rejects (a failure is counted and retried). */
  private async push(timeoutMs: number): Promise<void> {
    try {
      await this.pushOnce(timeoutMs)
    } catch (err) {
      this.failed((err as Error).message)
      await this.save()
    }
  }

  private async pushOnce(timeoutMs: number): Promise<void> {
    const url = await this.url.get()
    if (!url) {
      this.phase = 'no-remote' // kept pending: a remote set later gets them, with the rest
      return
    }
    const state = this.stateFor(url)
    if (this.caughtUp !== url) {
      await this.catchUp(state)
      this.caughtUp = url
    }
    if (this.pending.size === 0) {
      this.phase = 'idle'
      return
    }
    this.phase = 'pushing'
    const batch = new Map(this.pending)
    let r = await this.gitPush(batch, state, state.form, timeoutMs)
    let lines = parsePushPorcelain(r.stdout)
    const refusedAll = lines.length > 0 && lines.every((l) => l.outcome === 'remote-rejected')
    if (refusedAll && this.opts.refs === 'auto' && state.form === 'custom') {
      // The heads form is kept only once the remote took it: a remote that refuses everything
      // (a hook down for a while) must not move this machine's refs for good.
      const heads = await this.gitPush(batch, state, 'heads', timeoutMs)
      const headsLines = parsePushPorcelain(heads.stdout)
      if (headsLines.some((l) => l.outcome !== 'remote-rejected')) {
        this.log.info(
          { ws: this.ws.name, remote: state.url },
          `the remote refused refs/holdfast/…; pushing agents under refs/heads/holdfast/${this.opts.machine}/ instead`,
        )
        state.form = 'heads'
        r = heads
        lines = headsLines
      } else
        this.log.warn(
          { ws: this.ws.name, remote: state.url },
          'the remote refused both refs/holdfast/… and refs/heads/holdfast/…; keeping refs/holdfast/ and trying again later',
        )
    }
    if (lines.length === 0) {
      this.failed(failure(r, timeoutMs))
      await this.save()
      return
    }
    const diverging = this.succeeded(batch, lines, state)
    // Not a fast-forward: compare with the remote's, and push what diverged beside it at once.
    for (const agent of diverging.length
      ? await settleRefused(this.ws, state, diverging, { timeoutMs }, this.log)
      : [])
      if (!this.pending.has(agent)) this.pending.set(agent, batch.get(agent) as Pending)
    await this.save()
  }

  /** A diverged agent goes to its side ref; every other to its own ref in `form`. */
  private gitPush(batch: Map<string, Pending>, state: PushState, form: RefForm, timeoutMs: number) {
    const specs = [...batch].map(([agent, p]) => {
      const side = state.diverged?.[agent]?.side_ref
      return side ? `${p.commit}:${side}` : pushRefspec(p.commit, this.opts.machine, agent, form)
    })
    const args = ['push', '--porcelain', '--progress', '--no-verify', REMOTE, ...specs]
    return runGitIn(this.ws.repo.gitdir, args, {
      timeoutMs,
      idle: true,
      remote: true,
      signal: this.abort.signal,
    })
  }

  private failed(reason: string): void {
    this.failures++
    const delay = retryDelay(this.failures, this.opts.retryMinMs, this.opts.retryMaxMs)
    this.nextRetryAt = Date.now() + delay
    if (this.state) this.state.last_error = reason
    const level = this.failures === 1 ? 'warn' : 'debug'
    this.log[level](
      { ws: this.ws.name, failures: this.failures, retry_ms: delay },
      `push to ${REMOTE} failed: ${reason}; retrying, nothing is lost (the records stay here)`,
    )
    this.phase = 'retrying' // afterPush arms the retry
  }

  /** Record a push that reached the remote; returns the agents refused as not a fast-forward. */
  private succeeded(
    batch: Map<string, Pending>,
    lines: PushLine[],
    state: PushState,
  ): { agent: string; commit: string }[] {
    if (this.failures > 0)
      this.log.info({ ws: this.ws.name, after: this.failures }, `push to ${REMOTE} works again`)
    this.failures = 0
    this.nextRetryAt = undefined
    for (const [agent, sent] of batch)
      if (this.pending.get(agent)?.commit === sent.commit) this.pending.delete(agent)
    const diverging: { agent: string; commit: string }[] = []
    for (const r of recordPush(state, batch, lines, new Date().toISOString())) {
      this.log[r.first ? 'warn' : 'debug'](
        { ws: this.ws.name, agent: r.agent, step: formatStep(r.step) },
        `push to ${REMOTE} refused: ${r.reason}`,
      )
      const sent = batch.get(r.agent)
      if (r.diverging && sent) diverging.push({ agent: r.agent, commit: sent.commit })
    }
    this.phase = this.pending.size > 0 ? 'waiting' : 'idle'
    return diverging
  }

  private async save(): Promise<void> {
    if (!this.state) return
    try {
      await writePushState(this.ws.home, this.ws.name, this.state)
    } catch (err) {
      this.log.warn({ ws: this.ws.name, err: String(err) }, 'could not write the push state')
    }
  }

  /**
   * Stop: no new push starts; the one in flight may finish, then, when commits are still waiting
   * and the remote answered, one last push: both within `budgetMs` (git is stopped past it). What
   * stays is pushed by the next serve.
   */
  async close(budgetMs: number): Promise<void> {
    this.closed = true
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
    const until = Date.now() + budgetMs
    const spent = setTimeout(() => this.abort.abort(), budgetMs) // a push hung on the network ends here
    try {
      await this.running
      if (this.pending.size === 0 || this.phase === 'retrying' || this.phase === 'no-remote') return
      if (Date.now() < until) await this.push(Math.min(this.opts.timeoutMs, until - Date.now()))
    } finally {
      clearTimeout(spent)
    }
  }
}
