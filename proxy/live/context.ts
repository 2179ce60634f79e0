/**
 * What a running server holds: its home and config, the upstream, the workspaces and agents it
 * has touched, and the requests in flight (so shutdown can finish them). Invariant: one
 * Workspace and one AgentState per name, created on first use.
 */
import type { KeepWarm } from './keep-warm'
import { channel } from 'node:diagnostics_channel'
import { setMaxListeners } from 'node:events'
import { packageVersion } from '../process/package-root'
import { CACHE_TTL_MS, LONG_CACHE_TTL_MS } from '../core/hold'
import type { HoldfastConfig } from '../store/config'
import { type Committer, WorkerCommitter } from '../record/commit/committer'
import { Workspace } from '../store/workspace'
import { dropAllPackBytes } from '../store/git'
import { hookPreparer } from '../store/hook-install'
import { ConfigReader } from '../store/config/lineage'
import type { ToolHosts } from '../tools/hosts'
import { PluginHost } from '../../plugins/runner'
import { AgentState, CommitBacklog } from './agents'
import { DEFAULT_RESERVE_BYTES, Records } from '../record'
import type { McpEndpoint } from './mcp'
import type { Logger } from '../process/log'
import type { Upstream } from '../http/upstream'
import { IDLE_COLLECT_MS, IdleCollector } from '../process/idle-collect'
import type { Remotes } from '../remote'
import type { Telemetry } from '../telemetry'
import { ReadCache } from './read-cache'

const idleCollectMs = (config: HoldfastConfig): number => config.limits?.idle_collect_ms ?? IDLE_COLLECT_MS

/** A step committed: `{home, ws, agent, n}` (every step up to n is on the branch). The web view's live pages listen. */
export const stepCommitted = channel('holdfast.step.committed')

export interface StepCommitted {
  home: string
  ws: string
  agent: string
  n: number
}

/** An agent idle this long is forgotten (holdfast.yaml `limits.agent_idle_ms`). */
const AGENT_IDLE_MS = 10 * 60_000

/** Answered steps not yet on their branch past which new steps wait (docs/performance.md). */
const COMMIT_BACKLOG_LIMIT = 512

export class ServerContext {
  readonly workspaces = new Map<string, Workspace>()
  readonly agents = new Map<string, AgentState>()
  /** Steps answered but not yet on their branch; new steps wait while the limit are. */
  readonly backlog = new CommitBacklog(COMMIT_BACKLOG_LIMIT)
  /** The record's home: send halves, the previous records the hold reads, the answers' journal copies. */
  readonly records: Records
  readonly inflight = new Set<Promise<unknown>>()
  closing = false
  /**
   * Aborted when shutdown stops waiting (`timeouts.shutdown_ms`, or a second signal): a step still
   * in flight ends at once, recorded as interrupted (`SHUTDOWN_TIMEOUT`); a body still arriving is
   * refused.
   */
  readonly shutdown = new AbortController()
  readonly holdTtlMs: number
  readonly holdLongTtlMs: number
  readonly bodyLimit: number
  /** Each agent's last request's facts, so the next is read from its tail (stages/accept). */
  readonly reads: ReadCache
  /** One full garbage collection once no request has been in flight for `limits.idle_collect_ms`. */
  readonly idle: IdleCollector
  gcEvery: number
  private toolHosts: ToolHosts | undefined
  private mcpEndpoint: McpEndpoint | undefined
  /** How long an agent stays idle before it is forgotten (holdfast.yaml `limits.agent_idle_ms`). */
  readonly agentIdleMs: number
  private sweeper: NodeJS.Timeout | undefined
  /** The plugins in run order (DESIGN §10); set by serve before it listens, closed at shutdown. */
  plugins: PluginHost = PluginHost.none()
  /** The background pushes and config pulls of workspaces with a `holdfast` remote (proxy/remote); set by serve. */
  remotes: Remotes | undefined
  /** The spans' export (proxy/telemetry), set by serve when an endpoint is configured; else nothing is loaded. */
  telemetry: Telemetry | undefined
  /** Keep-warm pings (holdfast.yaml hold.keep_warm), set by serve when configured. */
  keepWarm: KeepWarm | undefined

  constructor(
    readonly home: string,
    public config: HoldfastConfig,
    readonly upstream: Upstream,
    readonly log: Logger,
    readonly committer: Committer = new WorkerCommitter(
      idleCollectMs(config),
      config.journal?.fsync === true,
      log,
    ),
  ) {
    this.holdTtlMs = config.hold?.ttl_ms ?? CACHE_TTL_MS
    this.holdLongTtlMs = config.hold?.long_ttl_ms ?? LONG_CACHE_TTL_MS
    this.bodyLimit = config.limits?.body_bytes ?? 32 * 1024 * 1024
    this.records = new Records(
      config.limits?.previous_cache_bytes ?? 64 * 1024 * 1024,
      config.journal?.fsync === true,
      config.journal?.reserve_bytes ?? DEFAULT_RESERVE_BYTES,
    )
    this.reads = new ReadCache(config.limits?.read_cache_bytes ?? 32 * 1024 * 1024)
    this.gcEvery = config.maintenance?.gc_every_steps ?? 200
    this.idle = new IdleCollector(idleCollectMs(config))
    // The packs read whole for a previous request after a restart or a cache miss (store/git/repo).
    this.idle.onIdle(dropAllPackBytes)
    this.agentIdleMs = config.limits?.agent_idle_ms ?? AGENT_IDLE_MS
    this.sweeper = setInterval(() => this.forgetIdleAgents(), Math.min(this.agentIdleMs, 60_000))
    this.sweeper.unref()
    // Every step and body in flight listens for shutdown (and stops listening when it ends): a busy
    // serve has more than Node's default of 10 at once, which is not a leak.
    setMaxListeners(0, this.shutdown.signal)
  }

  /**
   * Forget every agent idle for `limits.agent_idle_ms`: otherwise a serve keeps the state of every
   * agent it ever saw, for good. Returns how many were forgotten.
   */
  forgetIdleAgents(now = Date.now()): number {
    let forgotten = 0
    for (const [key, a] of this.agents) {
      if (!a.idleFor(this.agentIdleMs, now)) continue
      this.agents.delete(key)
      this.records.forget(a)
      this.reads.forget(key)
      forgotten++
    }
    return forgotten
  }

  /**
   * The tool hosts (MCP clients), made on first use: the MCP SDK (its heap and code:
   * docs/performance.md) is loaded only by a server that uses tools.
   */
  get tools(): ToolHosts {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { ToolHosts: Hosts } = require('../tools/hosts') as typeof import('../tools/hosts')
    return (this.toolHosts ??= new Hosts(this.home, () => this.config, this.log))
  }

  /** holdfast's MCP endpoint (the agents' `clients` tool, loaded sets, sessions), made on first use. */
  get mcp(): McpEndpoint {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { McpEndpoint: Endpoint } = require('./mcp') as typeof import('./mcp')
    return (this.mcpEndpoint ??= new Endpoint(this.tools, packageVersion()))
  }

  /** Close the MCP sessions and the tool hosts, if they were ever made. */
  async closeTools(): Promise<void> {
    await this.mcpEndpoint?.close() // ends the agents' MCP sessions (their event streams stay open otherwise)
    await this.toolHosts?.close() // kills tool hosts; a call in flight answers in band at once
  }

  private readonly readers = new Map<string, ConfigReader>()

  /** The roles reader of a workspace (one per workspace: its caches live as long as the server). */
  configReader(ws: string): ConfigReader {
    let r = this.readers.get(ws)
    if (!r) this.readers.set(ws, (r = new ConfigReader(this.workspace(ws).repo)))
    return r
  }

  workspace(name: string): Workspace {
    let ws = this.workspaces.get(name)
    if (!ws) {
      ws = new Workspace(this.home, name, {
        durable: this.config.journal?.fsync === true,
        // A workspace a first request makes gets its git hook (config commits are validated).
        prepare: hookPreparer(this.log),
      })
      this.workspaces.set(name, ws)
    }
    return ws
  }

  agent(ws: string, name: string): AgentState {
    const key = `${ws}\0${name}`
    let a = this.agents.get(key)
    if (!a) {
      a = new AgentState(
        this.workspace(ws),
        name,
        this.log,
        this.committer,
        this.gcEvery,
        this.backlog,
        this.config.prices,
      )
      const agent = a
      a.onCommitted = (n, commit) => {
        this.records.committed(agent, n)
        this.remotes?.committed(agent.ws, agent.name, n, commit)
        if (stepCommitted.hasSubscribers)
          stepCommitted.publish({ home: this.home, ws, agent: name, n } satisfies StepCommitted)
      }
      this.agents.set(key, a)
    }
    return a
  }

  /** Track a request's whole life (forward, finish) so shutdown waits for it; an admin request is no step for the idle collection. */
  track<T>(p: Promise<T>, kind: 'step' | 'admin' = 'step'): Promise<T> {
    this.inflight.add(p)
    this.idle.begin(kind === 'step')
    const drop = (): void => {
      this.inflight.delete(p)
      this.idle.end(kind === 'step')
    }
    p.then(drop, drop)
    return p
  }

  /**
   * Stop what the context runs on its own: the idle collector's timer (it would otherwise fire after
   * the server, or a test, is gone) and the records' journals. After `drain()`.
   */
  close(): void {
    clearInterval(this.sweeper)
    this.idle.stop()
    this.records.close()
  }

  /**
   * Wait for requests in flight, then for every queued commit. With a bound (shutdown): after `ms`
   * (or once `shutdown` is aborted) what is still in flight is aborted, and the rest — those
   * requests recording how they ended, the commits — gets `graceMs` more; what is left then stays
   * in the journal for the next start. Commits also get what is left of `ms`. Says what it cut short.
   */
  async drain(ms = Infinity, graceMs = SHUTDOWN_GRACE_MS): Promise<DrainReport> {
    const requests = async (): Promise<void> => {
      while (this.inflight.size > 0) await Promise.allSettled([...this.inflight])
    }
    const until = Date.now() + ms
    const report: DrainReport = { aborted: 0, uncommitted: false, lost: [] }
    if (!(await within(requests(), ms, this.shutdown.signal))) {
      report.aborted = this.inflight.size
      this.shutdown.abort()
      await within(requests(), graceMs)
    }
    const commits = Promise.allSettled([...this.agents.values()].map((a) => a.drained()))
    const left = Number.isFinite(ms) ? Math.max(0, until - Date.now()) + graceMs : Infinity
    const waited = !(await within(commits, left))
    // Steps still to commit besides the lost ones (those are said on their own).
    report.uncommitted =
      waited &&
      [...this.agents.values()].some((a) => {
        for (let n = a.committed + 1; n < a.next; n++) if (!a.answersInMemory.has(n)) return true
        return false
      })
    for (const a of this.agents.values())
      if (a.answersInMemory.size > 0)
        report.lost.push({
          workspace: a.ws.name,
          agent: a.name,
          steps: [...a.answersInMemory.keys()].sort((x, y) => x - y),
          reason: [...a.answersInMemory.values()][0] as string,
        })
    return report
  }
}

/** What a bounded drain cut short: requests it aborted, and whether commits were still queued. */
export interface DrainReport {
  aborted: number
  uncommitted: boolean
  /** Answered steps not committed whose answer only memory held (the journal refused it): lost with the stop. */
  lost: { workspace: string; agent: string; steps: number[]; reason: string }[]
}

/** After the shutdown bound, how long aborted steps and queued commits get to finish. */
const SHUTDOWN_GRACE_MS = 5_000

/** Whether `p` settled within `ms` (and before `stop` aborted): false when the time ran out first. */
async function within(p: Promise<unknown>, ms: number, stop?: AbortSignal): Promise<boolean> {
  if (ms === Infinity && !stop) {
    await p
    return true
  }
  if (stop?.aborted) return false
  let timer: NodeJS.Timeout | undefined
  let onStop: (() => void) | undefined
  const late = new Promise<false>((resolve) => {
    if (ms !== Infinity) timer = setTimeout(() => resolve(false), ms)
    onStop = () => resolve(false)
    stop?.addEventListener('abort', onStop)
  })
  try {
    return await Promise.race([p.then(() => true as const), late])
  } finally {
    clearTimeout(timer)
    if (onStop) stop?.removeEventListener('abort', onStop)
  }
}
