/**
 * The remote, as a running server sees it: one pusher per workspace (fed by the narrow call made
 * when a step's commit lands), the config pull at start and at `remote.fetch_interval_s`, and
 * what health shows. Invariant: only a workspace whose own repository has a remote named
 * `holdfast` talks to any remote; nothing here is on a request's path; close() stops every timer.
 */
import type { HoldfastConfig } from '../store/config'
import type { Logger } from '../process/log'
import { listWorkspaces, Workspace } from '../store/workspace'
import { pullConfig } from './config-pull'
import { RemoteUrl } from './git'
import { Pusher, type PushOptions } from './pusher'
import { machineName } from './refs'
import { divergedSentence, type PullReport, readPullReport, writePullReport } from './state'

export const DEFAULTS = {
  refs: 'auto',
  push: true,
  push_delay_ms: 1000,
  retry_min_ms: 1000,
  retry_max_ms: 300_000,
  fetch_interval_s: 300,
  timeout_s: 120,
} as const

/** How long close() gives a last push of what is still waiting. */
const CLOSE_BUDGET_MS = 10_000

export function pushOptions(config: HoldfastConfig): PushOptions {
  const r = config.remote ?? {}
  return {
    machine: machineName(config.machine),
    refs: r.refs ?? DEFAULTS.refs,
    delayMs: r.push_delay_ms ?? DEFAULTS.push_delay_ms,
    retryMinMs: r.retry_min_ms ?? DEFAULTS.retry_min_ms,
    retryMaxMs: r.retry_max_ms ?? DEFAULTS.retry_max_ms,
    timeoutMs: (r.timeout_s ?? DEFAULTS.timeout_s) * 1000,
  }
}

/** Pull one workspace's config from its remote, write the report, log what moved or was refused. */
export async function pullAndReport(
  ws: Workspace,
  url: string,
  timeoutMs: number,
  log: Logger,
  previous?: PullReport,
): Promise<PullReport> {
  const report = await pullConfig(ws, url, { timeoutMs })
  await writePullReport(ws.home, ws.name, report)
  const before = new Map(previous?.lineages.map((l) => [l.lineage, l]))
  if (report.error && report.error !== previous?.error)
    log.warn({ ws: ws.name }, `config pull from holdfast failed: ${report.error}`)
  for (const l of report.lineages) {
    const was = before.get(l.lineage)
    if (l.outcome === 'moved' || l.outcome === 'created')
      log.info({ ws: ws.name, lineage: l.lineage, commit: l.remote }, `config/${l.lineage} follows holdfast`)
    else if (
      (l.outcome === 'refused' || l.outcome === 'diverged' || l.outcome === 'failed') &&
      (was?.outcome !== l.outcome || was.remote !== l.remote)
    )
      log.warn(
        { ws: ws.name, lineage: l.lineage, commit: l.remote },
        `config/${l.lineage} did not follow holdfast: ${l.reason ?? l.outcome}`,
      )
  }
  return report
}

export class Remotes {
  private readonly pushers = new Map<string, Pusher>()
  private readonly urls = new Map<string, RemoteUrl>()
  private interval: NodeJS.Timeout | undefined
  private pulling: Promise<void> | undefined
  private closed = false
  readonly options: PushOptions

  constructor(
    private readonly home: string,
    private readonly config: HoldfastConfig,
    private readonly log: Logger,
  ) {
    this.options = pushOptions(config)
  }

  private get pushing(): boolean {
    return this.config.remote?.push ?? DEFAULTS.push
  }

  private pusher(ws: Workspace): Pusher {
    let p = this.pushers.get(ws.name)
    if (!p) this.pushers.set(ws.name, (p = new Pusher(ws, this.options, this.log)))
    return p
  }

  /** A step of `agent` landed as `commit`: the narrow call from where commits land (context). */
  committed(ws: Workspace, agent: string, step: number, commit: string): void {
    if (this.pushing && !this.closed) this.pusher(ws).committed(agent, step, commit)
  }

  /** After listen: catch up every workspace's pushes and pull config, then pull at the interval. */
  start(): void {
    void this.tick(true)
    const every = (this.config.remote?.fetch_interval_s ?? DEFAULTS.fetch_interval_s) * 1000
    if (every > 0) this.interval = setInterval(() => void this.tick(false), every)
  }

  /** Sync one workspace now (a remote was just set, or `holdfast remote pull` asked the server). */
  async sync(ws: Workspace): Promise<PullReport | undefined> {
    if (this.pushing) this.pusher(ws).sync()
    const url = await this.urlOf(ws)
    if (!url) return undefined
    const timeoutMs = this.options.timeoutMs
    return pullAndReport(ws, url, timeoutMs, this.log, readPullReport(this.home, ws.name))
  }

  private async urlOf(ws: Workspace): Promise<string | undefined> {
    let u = this.urls.get(ws.name)
    if (!u) this.urls.set(ws.name, (u = new RemoteUrl(ws.repo.gitdir)))
    return u.get()
  }

  /** One round over the workspaces with a remote; a round still running is not doubled. */
  private tick(first: boolean): Promise<void> {
    this.pulling ??= (async () => {
      try {
        for (const name of await listWorkspaces(this.home)) {
          if (this.closed) return
          const ws = new Workspace(this.home, name)
          const url = await this.urlOf(ws).catch(() => undefined)
          if (!url) continue
          if (first && this.pushing) this.pusher(ws).sync()
          await pullAndReport(ws, url, this.options.timeoutMs, this.log, readPullReport(this.home, name))
        }
      } catch (err) {
        this.log.warn({ err: String(err) }, 'remote: a config pull round failed')
      }
    })().finally(() => (this.pulling = undefined))
    return this.pulling
  }

  /** Each workspace's pusher phase (`no-remote` for one that looked and found none). */
  phases(): Map<string, string> {
    return new Map([...this.pushers].map(([name, p]) => [name, p.phase]))
  }

  /** What health shows per workspace with a remote the server pushes to. */
  health(): Record<string, unknown>[] {
    return [...this.pushers.values()]
      .filter((p) => p.phase !== 'no-remote')
      .map((p) => {
        const report = p.report
        return {
          workspace: p.ws.name,
          machine: this.options.machine,
          // What needs a person: histories that diverged (both kept), said as sentences.
          warnings: Object.entries(report.diverged ?? {}).map(([a, d]) => divergedSentence(a, d)),
          ...report,
          config: readPullReport(this.home, p.ws.name) ?? null,
        }
      })
  }

  async close(): Promise<void> {
    this.closed = true
    if (this.interval) clearInterval(this.interval)
    await this.pulling
    await Promise.all([...this.pushers.values()].map((p) => p.close(CLOSE_BUDGET_MS)))
  }
}
