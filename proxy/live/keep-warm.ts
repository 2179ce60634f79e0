/**
 * Keep-warm, on request (holdfast.yaml `hold.keep_warm`, off unless set; docs/hold.md): when an
 * agent whose last step left a cached prefix of at least `min_tokens` has been idle for `after_s`,
 * its last request is sent again with `max_tokens: 1` (and no stream) through this serve, on the
 * agent's `.aux` sibling, so the ping is a recorded step with its cost, and the provider's cache
 * lifetime starts again. At most `max_pings` per idle period; a step of the agent starts a new
 * period. Invariant: a ping never goes while the agent has a step in flight (it waits for the
 * next idle period), never for an `.aux` agent itself, and never throws into a step.
 */
import { fitName } from '../core/naming'
import type { Logger } from '../process/log'

export interface KeepWarmSettings {
  afterMs: number
  maxPings: number
  minTokens: number
}

export function keepWarmSettings(
  k: { after_s?: number; max_pings?: number; min_tokens?: number } | undefined,
): KeepWarmSettings | undefined {
  if (!k) return undefined
  return { afterMs: (k.after_s ?? 270) * 1000, maxPings: k.max_pings ?? 1, minTokens: k.min_tokens ?? 1024 }
}

/** The sibling a ping is recorded on. */
export const auxOf = (agent: string): string => fitName(`${agent}.aux`)
const isAux = (agent: string): boolean => /\.aux$/.test(agent)

/** What a ping needs: the agent's last finished step. */
export interface Warmable {
  ws: string
  agent: string
  n: number
}

interface Idle {
  timer: NodeJS.Timeout | undefined
  pings: number
  last: Warmable
}

export class KeepWarm {
  private readonly idle = new Map<string, Idle>()
  /** Steps in flight, by agent. */
  private readonly inflight = new Map<string, number>()
  /** Closed (the serve is stopping): no idle period starts again, so no ping is sent. */
  private closed = false

  constructor(
    private readonly settings: KeepWarmSettings,
    /** Send the ping (the serve posts to itself); resolves when its answer is in. */
    private readonly ping: (w: Warmable) => Promise<void>,
    private readonly log: Logger,
  ) {}

  private key = (ws: string, agent: string): string => `${ws}\0${agent}`

  /** A step of the agent began: its idle period (and its pings) end. */
  started(ws: string, agent: string): void {
    const key = this.key(ws, agent)
    this.inflight.set(key, (this.inflight.get(key) ?? 0) + 1)
    const i = this.idle.get(key)
    if (i?.timer) clearTimeout(i.timer)
    this.idle.delete(key)
  }

  /**
   * A step of the agent ended; `cachedTokens`: what its answer left in the provider's cache (null
   * when it failed). The idle period starts once no step of the agent is in flight.
   */
  settled(w: Warmable, cachedTokens: number | null): void {
    const key = this.key(w.ws, w.agent)
    const left = Math.max(0, (this.inflight.get(key) ?? 1) - 1)
    if (left === 0) this.inflight.delete(key)
    else this.inflight.set(key, left)
    if (this.closed) return
    if (left > 0 || isAux(w.agent) || cachedTokens === null || cachedTokens < this.settings.minTokens) return
    const i: Idle = { timer: undefined, pings: 0, last: w }
    this.idle.set(key, i)
    this.arm(key, i)
  }

  private arm(key: string, i: Idle): void {
    i.timer = setTimeout(() => void this.fire(key, i), this.settings.afterMs)
    i.timer.unref()
  }

  private async fire(key: string, i: Idle): Promise<void> {
    if (this.idle.get(key) !== i || this.inflight.has(key)) return // a step came since
    i.timer = undefined
    i.pings++
    try {
      await this.ping(i.last)
    } catch (err) {
      this.log.warn({ ws: i.last.ws, agent: i.last.agent, err: String(err) }, 'keep-warm: the ping failed')
    }
    if (this.idle.get(key) === i && i.pings < this.settings.maxPings) this.arm(key, i)
  }

  close(): void {
    this.closed = true
    for (const i of this.idle.values()) if (i.timer) clearTimeout(i.timer)
    this.idle.clear()
  }
}
