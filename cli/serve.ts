/**
 * `holdfast serve`: the main job. Prints exactly `holdfast listening on http://HOST:PORT` as the
 * first stdout line; SIGINT/SIGTERM finish in-flight steps (waiting at most
 * `timeouts.shutdown_ms`, then cutting them, recorded as interrupted) and commits, then exit 0. A
 * second signal cuts them at once; a third exits at once (the next start recovers the journal).
 * With `--leased` (how `holdfast run` starts it) it also stops as on a first signal once no run
 * holds a lease.
 */
import type { Command } from 'commander'
import { resolveHome } from '../proxy/store/home'
import { CliError } from './output'

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('run the proxy: forward, hold and record every step (the main job)')
    .option('--home <dir>', 'holdfast home (default $HOLDFAST_HOME, then ~/.holdfast)')
    .option('--host <host>', 'address to bind (default from holdfast.yaml: 127.0.0.1)')
    .option('--port <n>', 'port (0 picks a free one; default from holdfast.yaml: 8787)')
    .option('--leased', 'stop once no `holdfast run` holds a lease on the home (how run starts serve)')
    .action(async (opts: { home?: string; host?: string; port?: string; leased?: boolean }) => {
      const home = resolveHome(opts.home)
      let port: number | undefined
      if (opts.port !== undefined) {
        port = Number(opts.port)
        if (!Number.isInteger(port) || port < 0 || port > 65535)
          throw new CliError(`--port ${opts.port} is not a port number`)
      }
      // Loaded here, not at the top: every other command would pay for the proxy's modules.
      const { startServer } = await import('../proxy/serve')
      const { createLogger, flushLogger } = await import('../proxy/process/log')
      const log = createLogger()
      // The log's last entries reach stderr before the exit, unless its reader stalled (then at most FLUSH_MS late).
      const exit = (code: number): void => void flushLogger(log).then(() => process.exit(code))
      let server
      try {
        server = await startServer({ home, host: opts.host, port, log, leased: opts.leased === true })
      } catch (err) {
        throw new CliError((err as Error).message)
      }
      let signals = 0
      const stop = (signal: string): void => {
        signals++
        if (signals === 2) {
          log.warn({ signal }, 'a second signal: cutting the steps in flight now (recorded as interrupted)')
          server.ctx.shutdown.abort()
          return
        }
        if (signals > 2) {
          log.warn({ signal }, 'a third signal: exiting now; the next start recovers what the journal holds')
          process.exit(1)
        }
        log.info({ signal }, 'finishing in-flight steps and commits, then exiting')
        server.close().then(
          () => exit(0),
          (err: unknown) => {
            log.error({ err: String(err) }, 'shutdown failed')
            exit(1)
          },
        )
      }
      // Handlers first: a SIGTERM right after the listening line still finishes and removes serve.json.
      process.on('SIGINT', () => stop('SIGINT'))
      process.on('SIGTERM', () => stop('SIGTERM'))
      process.stdout.write(`holdfast listening on ${server.url}\n`)
      if (opts.leased) {
        const { stopWhenUnleased } = await import('../proxy/process/run-leases')
        stopWhenUnleased(home, (why) => stop(why), log)
      }
      const { wroteDefaultConfig } = await import('../proxy/store/config')
      if (wroteDefaultConfig)
        log.info({ file: wroteDefaultConfig }, `wrote a new holdfast.yaml at ${wroteDefaultConfig}`)
      const rows = Object.entries(server.ctx.config.providers).map(([name, r]) => `${name} → ${r.base_url}`)
      log.info({ home, url: server.url, pid: process.pid }, `serving ${home}; providers: ${rows.join(', ')}`)
    })
}
