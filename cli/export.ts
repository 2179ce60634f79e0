/**
 * `holdfast export <ws> [agent] -o file.html`: the web view's pages of a workspace (or one agent)
 * as one self-contained HTML file that opens offline — for sharing a session in a bug report. Read
 * from git and the journal; no server needed. Invariant: the file is written whole (a temporary
 * file renamed into place), or not at all. `holdfast export --otlp <ws> [agent]`: the recorded
 * steps sent as spans to the OTLP endpoint the telemetry settings name (proxy/telemetry/backfill).
 */
import { noun } from '../proxy/core/saving-words'
import fs from 'node:fs'
import path from 'node:path'
import type { Command } from 'commander'
import { resolveHome } from '../proxy/store/home'
import { exportHtml } from '../proxy/view/export'
import { asCliError } from './lookup'
import { CliError } from './output'
import { createLogger } from '../proxy/process/log'

/** `--otlp`: every committed step of `ws` (or `agent`) as a span, with its recorded times. */
async function otlp(home: string, ws: string, agent: string | undefined): Promise<void> {
  const { loadConfig } = await import('../proxy/store/config')
  const { telemetrySettings } = await import('../proxy/telemetry/settings')
  const settings = telemetrySettings(loadConfig(home).telemetry)
  if (!settings)
    throw new CliError(
      '--otlp needs an endpoint: set OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), or telemetry.endpoint in holdfast.yaml',
    )
  const { Telemetry } = await import('../proxy/telemetry')
  const { backfillSpans } = await import('../proxy/telemetry/backfill')
  const telemetry = new Telemetry(settings, createLogger('warn'))
  const tty = process.stderr.isTTY
  const done = await backfillSpans(home, ws, agent, telemetry, settings.semconv, (n, a) => {
    if (tty) process.stderr.write(`\rsending step spans: ${n} (${a})`)
  }).catch(asCliError)
  if (tty) process.stderr.write('\n')
  await telemetry.close(30_000)
  const h = telemetry.health()
  process.stdout.write(
    `sent ${done.sent} step ${noun(done.sent, 'span')} of ${agent ? `${ws}/${agent}` : ws} to ${settings.url}: ${h.exported} exported, ${h.failed} failed, ${h.dropped} dropped${done.skipped ? `; ${done.skipped} ${noun(done.skipped, 'step')} skipped (record unreadable or unfinished)` : ''}\n`,
  )
  if (h.failed > 0 || h.dropped > 0 || h.exported < done.sent) process.exitCode = 1
}

export function registerExport(program: Command): void {
  program
    .command('export')
    .description('write the web view of a workspace (or one agent) as one HTML file that opens offline')
    .argument('<ws>', 'workspace')
    .argument('[agent]', 'only this agent (with its subagents, side requests and attempts)')
    .option('-o, --output <file>', 'the HTML file to write')
    .option(
      '--otlp',
      'send the recorded steps as spans to the OTLP endpoint instead (OTEL_EXPORTER_OTLP_ENDPOINT or telemetry.endpoint)',
    )
    .option('--home <dir>', 'holdfast home (default $HOLDFAST_HOME, then ~/.holdfast)')
    .action(
      async (
        ws: string,
        agent: string | undefined,
        o: { output?: string; otlp?: boolean; home?: string },
      ) => {
        const home = resolveHome(o.home)
        if (o.otlp) return otlp(home, ws, agent)
        if (!o.output) throw new CliError('holdfast export needs -o <file.html> (or --otlp to send spans)')
        const tty = process.stderr.isTTY
        let shown = 0
        const doc = await exportHtml(home, ws, agent, (done, total) => {
          if (tty && (done === total || Date.now() - shown > 200)) {
            shown = Date.now()
            process.stderr.write(`\rexporting step ${done} of ${total}`)
          }
        }).catch(asCliError)
        if (tty) process.stderr.write('\n')
        const out = path.resolve(o.output)
        const tmp = `${out}.${process.pid}.tmp`
        fs.writeFileSync(tmp, doc)
        fs.renameSync(tmp, out)
        process.stdout.write(`wrote ${out} (${Math.round(Buffer.byteLength(doc) / 1024)} KB)\n`)
      },
    )
}
