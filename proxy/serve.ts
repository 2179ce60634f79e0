/**
 * `holdfast serve` as a function: take the home lock, make the home's token when none is
 * configured, clear stale ref locks, commit journal steps a crash left uncommitted, listen, write
 * serve.json; `close` waits for in-flight steps at most `timeouts.shutdown_ms` (then aborts them,
 * recorded as interrupted), finishes the commits, flushes the spans (at most TELEMETRY_CLOSE_MS),
 * then releases everything. Invariant: recovery commits every recorded step in step order before
 * the first new request is accepted, after a branch behind what its remote holds of it is fetched
 * back (remote/heal: one bounded fetch per workspace with a remote); without a telemetry endpoint
 * nothing of OpenTelemetry loads.
 */
import { noun } from './core/saving-words'
import { formatStep } from './core/naming'
import { KeepWarm, keepWarmSettings } from './live/keep-warm'
import { pingSender } from './live/keep-warm-ping'
import { configuredToken, loadConfig, type HoldfastConfig } from './store/config'
import { describeRecovery, recoverWorkspace } from './record/recover'
import { takeHomeLock, writeServeInfo, removeServeInfo } from './store/serve-lock'
import { isTransientFault, faultCode } from './store/faults'
import { exposedHome, homePaths } from './store/home'
import { ensureTokenFile, exposedSecrets, newToken } from './store/token'
import { listWorkspaces, Workspace } from './store/workspace'
import { configWarnings } from './store/config/lineage'
import { syncRegistrations } from './tools/registration'
import { hookPreparer } from './store/hook-install'
import { isLoopbackBind } from './http/address'
import { ServerContext } from './live/context'
import { pushOptions, Remotes } from './remote'
import { healAtStart } from './remote/heal'
import type { Logger } from './process/log'
import { createServer, listen } from './server'
import { hideHomeInErrors } from './http/respond'
import { Upstream } from './http/upstream'
import type { AnyPlugin } from '../plugins/instance'
import { loadPlugins } from '../plugins/loader'
import { recordsView } from './live/plugin-records'
import type { PluginHost } from '../plugins/runner'
import { telemetrySettings } from './telemetry/settings'
import { Telemetry } from './telemetry'

export interface ServeOptions {
  home: string
  host?: string
  port?: number
  log: Logger
  /** Config to use instead of reading `<home>/holdfast.yaml` (tests). */
  config?: HoldfastConfig
  /** Started by `holdfast run`: serve.json says so, and the serve stops once no run holds a lease. */
  leased?: boolean
  /** Extra built-in plugins by name, listed in `plugins:` like any built-in (tests: no module loading). */
  plugins?: Readonly<Record<string, AnyPlugin>>
}

export interface RunningServer {
  url: string
  port: number
  ctx: ServerContext
  /** Stop: new steps refused, in-flight ones waited for at most `timeouts.shutdown_ms`, then cut. */
  close(): Promise<void>
}

/** How long `close` waits for in-flight steps before it aborts them (`timeouts.shutdown_ms`). */
export const SHUTDOWN_MS = 20_000

/** How long `close` waits for the last spans to be exported (a backend that hangs never holds it). */
export const TELEMETRY_CLOSE_MS = 2000

/**
 * The home's token for this serve: `<home>/token`, made when missing. A disk that refuses the
 * first write (full, read-only, failing) does not stop serve: this run keeps a token in memory,
 * which no client knows — the admin surface, the MCP endpoint and the rows that add the
 * operator's key refuse everyone until a restart with room — and says so.
 */
function serveToken(home: string, log: Logger): string {
  try {
    return ensureTokenFile(home)
  } catch (err) {
    if (!isTransientFault(err)) throw err
    log.error(
      { err: String(err) },
      `could not write ${homePaths.token(home)} (${faultCode(err)}): until a restart with room on the disk, the admin surface, the MCP endpoint and the rows that add the operator's key refuse every request (the token is in memory only)`,
    )
    return newToken()
  }
}

export async function startServer(opts: ServeOptions): Promise<RunningServer> {
  const config = opts.config ?? loadConfig(opts.home)
  const host = opts.host ?? config.listen.host
  const port = opts.port ?? config.listen.port
  const configured = configuredToken(config)
  const loopback = isLoopbackBind(host)
  if (!loopback && !configured) {
    throw new Error(
      `binding ${host} (off loopback) requires a token: set token in holdfast.yaml or HOLDFAST_TOKEN`,
    )
  }
  const release = takeHomeLock(opts.home)
  hideHomeInErrors(opts.home)
  let upstream: Upstream | undefined
  let plugins: PluginHost | undefined
  try {
    // Without a configured token, the home's own (made at the first start) guards the admin
    // surface, the MCP endpoint and the rows that add the operator's key (proxy/http/access.ts).
    const token = configured ?? serveToken(opts.home, opts.log)
    for (const warning of [...exposedHome(opts.home), ...exposedSecrets(opts.home)]) opts.log.warn(warning)
    const waiting: { ws: string; agent: string }[] = []
    const heal = pushOptions(config)
    for (const name of await listWorkspaces(opts.home)) {
      // A workspace that cannot be recovered is reported and skipped: it never stops serve.
      try {
        const ws = new Workspace(opts.home, name, {
          durable: config.journal?.fsync === true,
          prepare: hookPreparer(opts.log), // ensure() installs or refreshes the hook
        })
        // Before the journal's steps are committed: a branch behind what was pushed is fetched back.
        const r = await recoverWorkspace(ws, opts.log, config.prices, () => healAtStart(ws, heal, opts.log))
        for (const { level, line } of describeRecovery(name, r)) opts.log[level]({ ws: name }, line)
        for (const w of r.waiting) waiting.push({ ws: name, agent: w.agent })
        for (const warning of await configWarnings(ws.repo, config.providers)) {
          opts.log.warn({ ws: name }, `roles: ${warning}; requests using that role are refused`)
        }
      } catch (err) {
        opts.log.error(
          { ws: name, err: String(err) },
          `workspace ${name} could not be recovered; serving without recovering it`,
        )
      }
    }
    await syncRegistrations(opts.home, config)
    upstream = new Upstream({
      headersTimeoutMs: config.timeouts?.upstream_headers_ms ?? 600_000,
      bodyTimeoutMs: config.timeouts?.upstream_body_ms ?? 600_000,
    })
    const ctx = new ServerContext(opts.home, config, upstream, opts.log)
    const telemetry = telemetrySettings(config.telemetry)
    if (telemetry) {
      for (const warning of telemetry.warnings) opts.log.warn(`telemetry: ${warning}`)
      ctx.telemetry = new Telemetry(telemetry, opts.log)
    }
    ctx.remotes = new Remotes(opts.home, config, opts.log)
    // A plugin that fails to load stops the start with one line naming it (DESIGN §10).
    ctx.plugins = plugins = await loadPlugins({
      home: opts.home,
      config,
      log: opts.log,
      builtins: opts.plugins,
      records: recordsView((name) => ctx.workspace(name)),
    })
    const server = createServer(ctx, {
      token,
      strict: configured !== undefined,
      public: !loopback,
      origins: new Set(config.browser_origins ?? []),
    })
    // Steps a fault kept in the journal are committed by the worker as soon as the disk allows.
    for (const w of waiting)
      ctx
        .agent(w.ws, w.agent)
        .init()
        .catch((err: unknown) =>
          opts.log.warn({ ws: w.ws, agent: w.agent, err: String(err) }, 'steps waiting in the journal'),
        )
    const addr = await listen(server, host, port)
    const shownHost = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address
    const url = `http://${shownHost}:${addr.port}`
    const keepWarm = keepWarmSettings(config.hold?.keep_warm)
    if (keepWarm) ctx.keepWarm = new KeepWarm(keepWarm, pingSender(ctx, url, token), opts.log)
    try {
      await writeServeInfo(opts.home, {
        url,
        pid: process.pid,
        started_at: new Date().toISOString(),
        home: opts.home,
        ...(opts.leased ? { leased: true } : {}),
      })
    } catch (err) {
      // A full disk does not stop serve: it serves, and says who cannot find it.
      if (!isTransientFault(err)) throw err
      opts.log.error(
        { err: String(err) },
        `could not write ${homePaths.serveJson(opts.home)} (${faultCode(err)}): serving on ${url}, but the git hooks and other holdfast commands cannot find this serve until it is restarted with room on the disk`,
      )
    }
    ctx.remotes.start() // in the background: only a heal (remote/heal, above) waits for the remote
    let closing: Promise<void> | undefined
    const up = upstream
    const shutdownMs = config.timeouts?.shutdown_ms ?? SHUTDOWN_MS
    return {
      url,
      port: addr.port,
      ctx,
      close: () =>
        (closing ??= (async () => {
          ctx.closing = true
          ctx.keepWarm?.close()
          const closed = new Promise<void>((r) => server.close(() => r()))
          server.closeIdleConnections()
          await ctx.closeTools()
          const cut = await ctx.drain(shutdownMs)
          if (cut.aborted > 0)
            opts.log.warn(
              { aborted: cut.aborted, shutdown_ms: shutdownMs },
              `stopped waiting after ${shutdownMs} ms: ${cut.aborted} request${cut.aborted === 1 ? '' : 's'} in flight aborted (steps recorded as interrupted, SHUTDOWN_TIMEOUT)`,
            )
          for (const l of cut.lost)
            opts.log.error(
              { ws: l.workspace, agent: l.agent, steps: l.steps.map((n) => formatStep(n)), reason: l.reason },
              `${l.workspace}/${l.agent}: the answers of ${noun(l.steps.length, 'step')} ${l.steps.map((n) => formatStep(n)).join(', ')} reached the client but the journal could not keep them (${l.reason}), and they are not committed: the next start records ${noun(l.steps.length, 'it', 'them')} as interrupted, with only the part of the answer the journal took`,
            )
          if (cut.uncommitted)
            opts.log.warn(
              cut.lost.length > 0
                ? 'the other answered steps not committed yet stay in the journal, and the next start commits them'
                : 'some answered steps are not committed yet: they stay in the journal, and the next start commits them',
            )
          await ctx.remotes?.close() // what the last commits left to push, within a few seconds
          await ctx.plugins.close()
          server.closeAllConnections()
          await closed
          await ctx.telemetry?.close(TELEMETRY_CLOSE_MS)
          await up.close()
          await ctx.committer.close()
          ctx.close()
          removeServeInfo(opts.home)
          release()
        })()),
    }
  } catch (err) {
    await plugins?.close()
    await upstream?.close()
    release()
    throw err
  }
}
