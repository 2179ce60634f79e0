/**
 * `holdfast serve` as a function: take the home lock, clear stale ref locks, commit journal steps
 * a crash left uncommitted, listen, write serve.json; `close` finishes in-flight steps and
 * commits, then releases everything. Invariant: recovery commits every recorded step in step
 * order before the first new request is accepted.
 */
import { configuredToken, loadConfig, type HoldfastConfig } from './store/config'
import { describeRecovery, recoverWorkspace } from './record/recover'
import { takeHomeLock, writeServeInfo, removeServeInfo } from './store/serve-lock'
import { listWorkspaces, Workspace } from './store/workspace'
import { configWarnings } from './store/config-lineage'
import { syncRegistrations } from './tools/registration'
import { logHookInstall } from '../hooks/install'
import { isLoopbackBind } from './address'
import { ServerContext } from './context'
import { Remotes } from './remote'
import type { Logger } from './log'
import { createServer, listen } from './server'
import { hideHomeInErrors } from './respond'
import { Upstream } from './upstream'
import type { AnyPlugin } from '../plugins/instance'
import { loadPlugins } from '../plugins/loader'
import type { PluginHost } from '../plugins/runner'

export interface ServeOptions {
  home: string
  host?: string
  port?: number
  log: Logger
  /** Config to use instead of reading `<home>/holdfast.yaml` (tests). */
  config?: HoldfastConfig
  /** Extra built-in plugins by name, listed in `plugins:` like any built-in (tests: no module loading). */
  plugins?: Readonly<Record<string, AnyPlugin>>
}

export interface RunningServer {
  url: string
  port: number
  ctx: ServerContext
  close(): Promise<void>
}

export async function startServer(opts: ServeOptions): Promise<RunningServer> {
  const config = opts.config ?? loadConfig(opts.home)
  const host = opts.host ?? config.listen.host
  const port = opts.port ?? config.listen.port
  const token = configuredToken(config)
  const loopback = isLoopbackBind(host)
  if (!loopback && !token) {
    throw new Error(
      `binding ${host} (off loopback) requires a token: set token in holdfast.yaml or HOLDFAST_TOKEN`,
    )
  }
  const release = takeHomeLock(opts.home)
  hideHomeInErrors(opts.home)
  let upstream: Upstream | undefined
  let plugins: PluginHost | undefined
  try {
    const waiting: { ws: string; agent: string }[] = []
    for (const name of await listWorkspaces(opts.home)) {
      // A workspace that cannot be recovered is reported and skipped: it never stops serve.
      try {
        const ws = new Workspace(opts.home, name, { durable: config.journal?.fsync === true })
        const r = await recoverWorkspace(ws, opts.log, config.prices) // ensure() installs or refreshes the hook
        for (const { level, line } of describeRecovery(name, r)) opts.log[level]({ ws: name }, line)
        for (const w of r.waiting) waiting.push({ ws: name, agent: w.agent })
        logHookInstall(opts.log, name, ws.hookInstall)
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
    ctx.remotes = new Remotes(opts.home, config, opts.log)
    // A plugin that fails to load stops the start with one line naming it (DESIGN §10).
    ctx.plugins = plugins = await loadPlugins({
      home: opts.home,
      config,
      log: opts.log,
      builtins: opts.plugins,
    })
    const server = createServer(ctx, {
      token,
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
    await writeServeInfo(opts.home, {
      url,
      pid: process.pid,
      started_at: new Date().toISOString(),
      home: opts.home,
    })
    ctx.remotes.start() // in the background: a remote that is down never delays the start
    let closing: Promise<void> | undefined
    const up = upstream
    return {
      url,
      port: addr.port,
      ctx,
      close: () =>
        (closing ??= (async () => {
          ctx.closing = true
          const closed = new Promise<void>((r) => server.close(() => r()))
          server.closeIdleConnections()
          await ctx.closeTools()
          await ctx.drain()
          await ctx.remotes?.close() // what the last commits left to push, within a few seconds
          await ctx.plugins.close()
          server.closeAllConnections()
          await closed
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
