/**
 * The tool hosts of one holdfast process (DESIGN §7): one lazily connected HostConnection per client
 * declared in holdfast.yaml, the stored advertisement kept current (after every listing and on
 * `list_changed`), and routed calls answered as tool results. Invariant: a host that is down keeps
 * its last stored advertisement and nothing transient is stored; every failure of the host during
 * a call is an in-band result, never a hang or a throw. No clients declared: every view is empty.
 */
import type { AdvertisedTool } from '../core/loaded-set'
import type { Json } from '../core/json'
import * as say from '../core/tool-sentences'
import type { Client as ClientSpec } from '../../generated/holdfast'
import type { Logger } from '../process/log'
import type { HoldfastConfig } from '../store/config'
import {
  mapAdvertisement,
  readAdvertisement,
  storeAdvertisement,
  type Rejected,
  type StoredAdvertisement,
} from './advertisement'
import { HostConnection, HostFailure, type Backoff } from './connection'
import { registeredWorkspaces } from './registration'

/** A routed call's answer: MCP content blocks, and whether the tool (or holdfast) refused. */
export interface ToolResult {
  content: Json[]
  is_error: boolean
}

export const refusal = (sentence: string): ToolResult => ({
  content: [{ type: 'text', text: sentence }],
  is_error: true,
})

/** What holdfast knows about one client now. */
export interface ClientView {
  client: string
  transport: 'stdio' | 'http'
  connected: boolean
  /** When the stored advertisement was first observed; null when there is none. */
  observed_at: string | null
  tools: AdvertisedTool[]
  rejected: Rejected[]
  /** Why the host could not be listed just now; null when it could. */
  error: string | null
  workspaces: string[]
}

export interface HostTimings {
  /** Deadline for connecting and listing (default: the client's timeout_ms, else 30 s). */
  listMs?: number
  backoff?: Backoff
}

export class ToolHosts {
  private readonly conns = new Map<string, HostConnection>()
  private readonly refreshing = new Map<string, Promise<unknown>>()
  private closed = false

  constructor(
    readonly home: string,
    private readonly configOf: () => HoldfastConfig,
    private readonly log: Logger,
    private readonly timings: HostTimings = {},
  ) {}

  /** Declared client names, sorted. */
  declared(): string[] {
    return Object.keys(this.configOf().clients ?? {}).sort()
  }

  spec(client: string): ClientSpec | undefined {
    const clients = this.configOf().clients ?? {}
    return Object.hasOwn(clients, client) ? clients[client] : undefined
  }

  private conn(client: string): HostConnection | undefined {
    const spec = this.spec(client)
    if (!spec || this.closed) return undefined
    let c = this.conns.get(client)
    if (!c) {
      c = new HostConnection(
        client,
        spec,
        this.log,
        this.timings.backoff ?? { baseMs: 500, maxMs: 30_000 },
        () => this.onListChanged(client),
      )
      this.conns.set(client, c)
    }
    return c
  }

  private listMs(client: string): number {
    return this.spec(client)?.timeout_ms ?? this.timings.listMs ?? 30_000
  }

  /** Starting a host (a child, a session) gets at least 10 s, whatever the request deadline. */
  private connectMs(client: string): number {
    return Math.max(this.listMs(client), 10_000)
  }

  callMs(client: string): number {
    return this.spec(client)?.timeout_ms ?? this.configOf().timeouts?.tool_call_ms ?? 120_000
  }

  /** List the host now and store the advertisement when it changed. Throws HostFailure. */
  async refresh(client: string): Promise<StoredAdvertisement> {
    const c = this.conn(client)
    if (!c) throw new HostFailure('unreachable', say.unknownClient(client))
    await c.ready(Date.now() + this.connectMs(client))
    const raw = await c.list(Date.now() + this.listMs(client))
    return storeAdvertisement(this.home, client, mapAdvertisement(raw))
  }

  /** A `list_changed` refreshes once more after any refresh in flight (loaded sets stay frozen). */
  private onListChanged(client: string): void {
    const run = (this.refreshing.get(client) ?? Promise.resolve())
      .then(() => this.refresh(client))
      .then(
        (ad) => this.log.info({ client, tools: ad.tools.length }, 'tool host changed its tools'),
        (err: unknown) =>
          this.log.warn({ client, err: String(err) }, 'refreshing a changed tool list failed'),
      )
    this.refreshing.set(client, run)
    void run.then(() => {
      if (this.refreshing.get(client) === run) this.refreshing.delete(client)
    })
  }

  /** The client as known now: listed live when it can be, else from its stored advertisement. */
  async view(client: string): Promise<ClientView | undefined> {
    const spec = this.spec(client)
    if (!spec) return undefined
    let stored: StoredAdvertisement | undefined
    let error: string | null = null
    try {
      stored = await this.refresh(client)
    } catch (err) {
      if (!(err instanceof HostFailure)) throw err
      error = err.message
      stored = readAdvertisement(this.home, client)
    }
    return {
      client,
      transport: 'url' in spec.mcp ? 'http' : 'stdio',
      connected: this.conns.get(client)?.connected ?? false,
      observed_at: stored?.observed_at ?? null,
      tools: stored?.tools ?? [],
      rejected: stored?.rejected ?? [],
      error,
      workspaces: registeredWorkspaces(this.home, client),
    }
  }

  /**
   * Call `tool` on `client` with the client's deadline. A host that does not announce list changes
   * is listed first, so a tool it stopped advertising is refused rather than called.
   */
  async call(client: string, tool: string, input: Record<string, unknown>): Promise<ToolResult> {
    const c = this.conn(client)
    if (!c)
      return refusal(
        this.closed ? say.unreachable(client, 'holdfast is shutting down') : say.unknownClient(client),
      )
    const ms = this.callMs(client)
    try {
      await c.ready(Date.now() + this.connectMs(client))
      const deadline = Date.now() + ms
      let ad = c.listChanged && c.tools ? mapAdvertisement(c.tools) : undefined
      if (!ad) {
        const listed = mapAdvertisement(await c.list(deadline))
        ad = await storeAdvertisement(this.home, client, listed).catch((err: unknown) => {
          this.log.warn({ client, err: String(err) }, 'storing the advertisement failed; the call goes on')
          return listed
        })
      }
      if (!ad.tools.some((t) => t.name === tool)) return refusal(say.notAdvertised(client, tool))
      const r = await c.call(tool, input, deadline)
      return { content: r.content as Json[], is_error: r.isError === true }
    } catch (err) {
      if (!(err instanceof HostFailure)) throw err
      switch (err.kind) {
        case 'unreachable':
          return refusal(say.unreachable(client, err.message))
        case 'timeout':
          return refusal(say.timedOut(client, tool, ms))
        case 'gone':
          return refusal(say.closedDuringCall(client, tool, err.message))
        case 'refused':
          return refusal(say.callFailed(client, tool, err.message))
      }
    }
  }

  /** Close every session and kill every child; later uses are refused. */
  async close(): Promise<void> {
    this.closed = true
    await Promise.allSettled([...this.refreshing.values()])
    await Promise.all([...this.conns.values()].map((c) => c.close()))
  }
}
