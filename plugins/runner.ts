/**
 * The runner: the loaded plugins in run order and the hooks the server calls (DESIGN §10).
 * Deciding hooks (`identify`, `route`) run in order until one answers; a throw or a malformed
 * answer fails the request closed (502 PLUGIN_FAILED naming plugin and hook). Observing hooks
 * (`onResponse`, `onError`) run for every plugin; a throw is logged and skipped. Invariant: a
 * request runs on the chain it started with, even if a reload swaps an instance meanwhile. The
 * runner knows nothing of the pipeline: it is handed plain facts and returns plain decisions.
 */
import { HoldfastError } from '../proxy/core/errors'
import type { JsonObject } from '../proxy/core/json'
import type { DialectName } from '../proxy/core/dialect'
import { type Logger, silentLogger } from '../proxy/process/log'
import type { Exchange, FailureView, Hooks, ResponseView, RouteView } from './api'
import { checkIdentify, checkRoute } from './decisions'
import { createView, type Lazy, lazily } from './exchange'
import { once } from '../proxy/core/once'
import type { LoadedPlugin } from './instance'

type Decider = 'identify' | 'route'
type Decision<H extends Decider> = NonNullable<
  H extends 'identify' ? ReturnType<typeof checkIdentify> : ReturnType<typeof checkRoute>
>

const messageOf = (err: unknown): string => (err as Error)?.message ?? String(err)

/** The first answer of `hook` along `chain`, checked; undefined when every plugin passed. */
export async function decide<H extends Decider>(
  chain: readonly LoadedPlugin[],
  hook: H,
  view: () => Exchange,
): Promise<{ decision: Decision<H>; by: string } | undefined> {
  for (const p of chain) {
    const fn = p.hooks[hook] as ((ex: Exchange) => unknown) | undefined
    if (!fn) continue
    let out: unknown
    try {
      out = await fn.call(p.hooks, view())
    } catch (err) {
      throw new HoldfastError('PLUGIN_FAILED', `plugin ${p.name} (${hook}) failed: ${messageOf(err)}`, {
        cause: err,
      })
    }
    const decision = (hook === 'identify' ? checkIdentify(p.name, out) : checkRoute(p.name, out)) as
      Decision<H> | undefined
    if (decision) return { decision, by: p.name }
  }
  return undefined
}

/** Call `close()` of one instance; a throw is logged. */
export async function closePlugin(p: LoadedPlugin, log: Logger): Promise<void> {
  try {
    await p.hooks.close?.call(p.hooks)
  } catch (err) {
    log.warn({ plugin: p.name, hook: 'close', err: messageOf(err) }, 'plugin close failed')
  }
}

/** How a step or count_tokens call ended: meta.json's finish half, or the forward result. */
export interface Settled {
  status?: number | null
  outcome?: string
  error?: { code: string; message: string } | null
  usage?: ResponseView['usage']
  stop_reason?: string | null
  step?: string
}

/** What the plugins' view of one request is made from, known at accept. */
export interface RequestFacts {
  id: string
  dialect: DialectName
  kind: 'step' | 'count_tokens'
  path: string
  workspace: string
  agent: string
  body: JsonObject
  /** The body's size in bytes. */
  bytes: number
  /** The headers as meta.json records them, computed once (shared with the record). */
  headers: () => Readonly<Record<string, string>>
}

/** A plugin's route answer (DESIGN §10): any of role, provider row, model; `by` names the plugin. */
export interface RouteChoice {
  role?: string
  provider?: string
  model?: string
  by: string
}

/** identify's answer, applied: where the request now goes, and who moved it from where. */
export interface Identified {
  workspace: string
  agent: string
  moved?: { plugin: string; from_workspace: string; from_agent: string; why?: string }
  /** A plugin marked the request as a compaction, or the first after one. */
  compaction?: { kind: 'request' | 'after'; via: string }
}

/**
 * The plugins' part in one request: the chain it started with, its view (summary computed once,
 * lazily), and the hooks in lifecycle order. Invariant: exactly one of `settled` / `failed`.
 */
export class PluginCall {
  private readonly lazy: Lazy
  private where: { workspace: string; agent: string }
  private routed: RouteView | null = null

  constructor(
    private readonly chain: readonly LoadedPlugin[],
    private readonly log: Logger,
    private readonly facts: RequestFacts,
  ) {
    this.lazy = lazily(facts.dialect, facts.body, facts.bytes, facts.headers)
    this.where = { workspace: facts.workspace, agent: facts.agent }
  }

  private view(response: ResponseView | null): Exchange {
    const f = this.facts
    return createView(
      {
        id: f.id,
        dialect: f.dialect,
        kind: f.kind,
        path: f.path,
        ...this.where,
        body: f.body,
        route: this.routed,
        response,
        replay: false,
      },
      this.lazy,
    )
  }

  private has(hook: keyof Hooks): boolean {
    return this.chain.some((p) => p.hooks[hook] !== undefined)
  }

  /** identify: the first answer moves the request; names were checked by `checkIdentify`. */
  async identify(): Promise<Identified> {
    const here = { ...this.where }
    if (!this.has('identify')) return here
    const found = await decide(
      this.chain,
      'identify',
      once(() => this.view(null)),
    )
    if (!found) return here
    const { workspace = here.workspace, agent = here.agent, why, compaction } = found.decision
    const marked = compaction ? { compaction } : {}
    if (workspace === here.workspace && agent === here.agent) return { ...here, ...marked }
    this.where = { workspace, agent }
    return {
      workspace,
      agent,
      ...marked,
      moved: {
        plugin: found.by,
        from_workspace: here.workspace,
        from_agent: here.agent,
        ...(why !== undefined ? { why } : {}),
      },
    }
  }

  /** route: shown where resolve would send the request, the first answer is the choice. */
  async route(resolved: RouteView): Promise<RouteChoice | undefined> {
    this.routed = resolved
    if (!this.has('route')) return undefined
    const found = await decide(
      this.chain,
      'route',
      once(() => this.view(null)),
    )
    if (!found) return undefined
    const { why, ...choice } = found.decision
    if (why !== undefined) this.log.debug({ plugin: found.by, why }, 'plugin route decision')
    return { ...choice, by: found.by }
  }

  /** Where the request went, for the observing hooks. */
  sentTo(route: RouteView): void {
    this.routed = route
  }

  private async observe(response: ResponseView | null, err?: FailureView): Promise<void> {
    const hook = err ? 'onError' : 'onResponse'
    if (!this.has(hook)) return
    const view = this.view(response)
    for (const p of this.chain) {
      try {
        if (err) await p.hooks.onError?.call(p.hooks, view, err)
        else await p.hooks.onResponse?.call(p.hooks, view)
      } catch (e) {
        this.log.warn({ plugin: p.name, hook, err: messageOf(e) }, 'plugin hook failed; ignored')
      }
    }
  }

  /** After finish (or forward, for count_tokens): exactly one of onResponse / onError. */
  async settled(r: Settled): Promise<void> {
    const answered = r.outcome === 'ok' || (r.outcome === 'upstream_error' && !r.error)
    if (!answered) {
      const error = r.error ?? { code: 'INTERNAL', message: 'the step did not finish' }
      return this.observe(null, { code: error.code, message: error.message })
    }
    return this.observe({
      status: r.status ?? null,
      outcome: r.outcome as string,
      step: r.step ?? null,
      usage: r.usage ?? null,
      stopReason: r.stop_reason ?? null,
    })
  }

  /** A stage before the send failed (the client got the error already). */
  async failed(err: unknown): Promise<void> {
    const code = err instanceof HoldfastError ? err.code : 'INTERNAL'
    return this.observe(null, { code, message: messageOf(err) })
  }
}

export class PluginHost {
  private chain: readonly LoadedPlugin[]
  private readonly stops: (() => void)[] = []
  private closing?: Promise<void>

  constructor(
    chain: readonly LoadedPlugin[],
    private readonly log: Logger,
  ) {
    this.chain = Object.freeze([...chain])
  }

  static none(): PluginHost {
    return new PluginHost([], silentLogger())
  }

  get plugins(): readonly LoadedPlugin[] {
    return this.chain
  }

  /** One request's plugin calls, on the chain as it is now (a reload meanwhile does not change it). */
  begin(facts: RequestFacts): PluginCall {
    return new PluginCall(this.chain, this.log, facts)
  }

  /** Put `next` in the place of the instance from the same source (a reload); the old one is returned. */
  replace(next: LoadedPlugin): LoadedPlugin | undefined {
    const i = this.chain.findIndex((p) => p.source === next.source)
    if (i < 0) return undefined
    const old = this.chain[i]
    const chain = [...this.chain]
    chain[i] = next
    this.chain = Object.freeze(chain)
    return old
  }

  /** Run `stop` at close (file watchers). */
  onClose(stop: () => void): void {
    this.stops.push(stop)
  }

  /** Stop watching, then `close()` every instance, last first. */
  close(): Promise<void> {
    return (this.closing ??= (async () => {
      for (const stop of this.stops.splice(0)) stop()
      for (const p of [...this.chain].reverse()) await closePlugin(p, this.log)
    })())
  }
}
