/**
 * The runner: the loaded plugins in run order and the hooks the server calls (DESIGN §10).
 * Deciding hooks (`identify`, `route`) run in order until one answers; a throw or a malformed
 * answer fails the request closed (502 PLUGIN_FAILED naming plugin and hook). Observing hooks
 * (`onResponse`, `onError`) run for every plugin; a throw is logged and skipped. Invariant: a
 * request runs on the chain it started with, even if a reload swaps an instance meanwhile.
 */
import { HoldfastError } from '../proxy/core/errors'
import type { ServerContext } from '../proxy/context'
import { type Logger, silentLogger } from '../proxy/log'
import { type Exchange as PipelineExchange, resolve, type RouteChoice } from '../proxy/pipeline'
import type { Exchange, FailureView, Hooks, ResponseView } from './api'
import { checkIdentify, checkRoute } from './decisions'
import { createView, type Lazy, lazily, once } from './exchange'
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
interface Settled {
  status?: number | null
  outcome?: string
  error?: { code: string; message: string } | null
  usage?: ResponseView['usage']
  stop_reason?: string | null
  step?: string
}

interface LiveState {
  chain: readonly LoadedPlugin[]
  lazy: Lazy
}

export class PluginHost {
  private chain: readonly LoadedPlugin[]
  private readonly live = new WeakMap<PipelineExchange, LiveState>()
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

  private state(ex: PipelineExchange): LiveState {
    let s = this.live.get(ex)
    if (!s) {
      s = {
        chain: this.chain,
        lazy: lazily(ex.dialect.name, ex.parsed, ex.raw.length, ex.recordedHeaders),
      }
      this.live.set(ex, s)
    }
    return s
  }

  private view(ex: PipelineExchange, s: LiveState, response: ResponseView | null): Exchange {
    const r = ex.route
    return createView(
      {
        id: ex.id,
        dialect: ex.dialect.name,
        kind: ex.kind,
        path: ex.path,
        workspace: ex.workspace,
        agent: ex.agent,
        body: ex.parsed,
        route: r ? { provider: r.provider, model: r.model, role: r.role, plugin: r.plugin ?? null } : null,
        response,
        replay: false,
      },
      s.lazy,
    )
  }

  private has(s: LiveState, hook: keyof Hooks): boolean {
    return s.chain.some((p) => p.hooks[hook] !== undefined)
  }

  /** identify: the first answer moves the request; names were checked by `checkIdentify`. */
  async identify(ex: PipelineExchange): Promise<void> {
    const s = this.state(ex)
    if (!this.has(s, 'identify')) return
    const found = await decide(
      s.chain,
      'identify',
      once(() => this.view(ex, s, null)),
    )
    if (!found) return
    const { workspace = ex.workspace, agent = ex.agent, why } = found.decision
    if (workspace === ex.workspace && agent === ex.agent) return
    ex.identified = {
      plugin: found.by,
      from_workspace: ex.workspace,
      from_agent: ex.agent,
      ...(why !== undefined ? { why } : {}),
    }
    ex.workspace = workspace
    ex.agent = agent
  }

  /** route: the first answer, as the choice `resolve` re-resolves with. */
  async route(ex: PipelineExchange): Promise<RouteChoice | undefined> {
    const s = this.state(ex)
    if (!this.has(s, 'route')) return undefined
    const found = await decide(
      s.chain,
      'route',
      once(() => this.view(ex, s, null)),
    )
    if (!found) return undefined
    const { why, ...choice } = found.decision
    if (why !== undefined) this.log.debug({ plugin: found.by, why }, 'plugin route decision')
    return { ...choice, by: found.by }
  }

  private async observe(
    ex: PipelineExchange,
    response: ResponseView | null,
    err?: FailureView,
  ): Promise<void> {
    const s = this.state(ex)
    const hook = err ? 'onError' : 'onResponse'
    if (!this.has(s, hook)) return
    const view = this.view(ex, s, response)
    for (const p of s.chain) {
      try {
        if (err) await p.hooks.onError?.call(p.hooks, view, err)
        else await p.hooks.onResponse?.call(p.hooks, view)
      } catch (e) {
        this.log.warn({ plugin: p.name, hook, err: messageOf(e) }, 'plugin hook failed; ignored')
      }
    }
  }

  /** After finish (or forward, for count_tokens): exactly one of onResponse / onError. */
  async settled(ex: PipelineExchange, r: Settled): Promise<void> {
    const answered = r.outcome === 'ok' || (r.outcome === 'upstream_error' && !r.error)
    if (!answered) {
      const error = r.error ?? { code: 'INTERNAL', message: 'the step did not finish' }
      return this.observe(ex, null, { code: error.code, message: error.message })
    }
    return this.observe(ex, {
      status: r.status ?? null,
      outcome: r.outcome as string,
      step: r.step ?? null,
      usage: r.usage ?? null,
      stopReason: r.stop_reason ?? null,
    })
  }

  /** A stage before the send failed (the client got the error already). */
  async failed(ex: PipelineExchange, err: unknown): Promise<void> {
    const code = err instanceof HoldfastError ? err.code : 'INTERNAL'
    return this.observe(ex, null, { code, message: messageOf(err) })
  }

  /** Stop watching, then `close()` every instance, last first. */
  close(): Promise<void> {
    return (this.closing ??= (async () => {
      for (const stop of this.stops.splice(0)) stop()
      for (const p of [...this.chain].reverse()) await closePlugin(p, this.log)
    })())
  }
}

/** route stage: plugins decide after resolve; a choice re-resolves, and a bad choice is the plugin's fault. */
export async function routeByPlugins(ctx: ServerContext, ex: PipelineExchange): Promise<void> {
  const choice = await ctx.plugins.route(ex)
  if (!choice) return
  try {
    await resolve(ctx, ex, choice)
  } catch (err) {
    if (err instanceof HoldfastError && err.code === 'PLUGIN_FAILED') throw err
    const { by, ...chose } = choice
    throw new HoldfastError(
      'PLUGIN_FAILED',
      `plugin ${by} (route) chose ${JSON.stringify(chose)}, which holdfast refused: ${messageOf(err)}`,
      { cause: err },
    )
  }
}
