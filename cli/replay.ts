/**
 * `holdfast replay --plugin <p> <ws> <agent> [--json]`: a plugin's deciding hooks (`identify`,
 * `route`) run over an agent's recorded steps, in order, and print what they would decide.
 * Invariant: nothing is sent and nothing in the home changes; the plugin gets a scratch data
 * directory. It sees each step as recorded: request.json (the bytes sent) and meta.json's
 * sanitized headers; `identify` sees the address the client used, `route` the recorded route.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { Command } from 'commander'
import { HoldfastError } from '../proxy/core/errors'
import { assertName, formatStep } from '../proxy/core/naming'
import type { IdentifyDecision, RouteDecision } from '../plugins/api'
import { createView, lazily } from '../plugins/exchange'
import { closePlugin, decide } from '../plugins/runner'
import { type AnyPlugin, instantiate, pinoLog } from '../plugins/instance'
import { loadOne } from '../plugins/loader'
import { createLogger } from '../proxy/process/log'
import { loadConfig } from '../proxy/store/config'
import { resolveHome } from '../proxy/store/home'
import { listSteps, readStepMeta, readStepRequest } from '../proxy/record/read'
import { recordsView } from '../proxy/live/plugin-records'
import { Workspace } from '../proxy/store/workspace'
import { existingWorkspace } from './lookup'
import { CliError, printJson, table } from './output'

interface ReplayRow {
  step: string
  approx_tokens: number | null
  recorded: { agent: string; provider: string; model: string | null; role: string | null }
  identify: IdentifyDecision | null
  route: RouteDecision | null
  error: { hook: string; message: string } | null
}

export async function replay(
  home: string,
  wsName: string,
  agent: string,
  plugin: { definition: AnyPlugin; options: unknown; source: string },
): Promise<ReplayRow[]> {
  const ws = await existingWorkspace(home, wsName)
  assertName('agent', agent)
  const log = createLogger(process.env.HOLDFAST_LOG_LEVEL ?? 'warn')
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-replay-'))
  const p = await instantiate(plugin.definition, plugin.options, {
    dataDir: scratch,
    log: pinoLog(log, plugin.definition.name),
    source: plugin.source,
    records: recordsView((name) => new Workspace(home, name)),
  }).catch((err: Error) => {
    fs.rmSync(scratch, { recursive: true, force: true })
    throw new CliError(err.message)
  })
  const rows: ReplayRow[] = []
  try {
    for (const s of await listSteps(ws, agent)) {
      const meta = await readStepMeta(ws, agent, s.n)
      // A record that is absent or not a request is reported on its row, like a missing one.
      const request = await readStepRequest(ws, agent, s.n).catch(() => undefined)
      const row: ReplayRow = {
        step: formatStep(s.n),
        approx_tokens: null,
        recorded: {
          agent: meta?.agent ?? agent,
          provider: meta?.route.provider ?? '-',
          model: meta?.route.model ?? null,
          role: meta?.route.role ?? null,
        },
        identify: null,
        route: null,
        error: null,
      }
      rows.push(row)
      if (!meta || !request) {
        row.error = { hook: 'record', message: 'the record cannot be read back as a request' }
        continue
      }
      const { bytes, body } = request
      const lazy = lazily(meta.dialect, body, bytes.length, meta.request_headers)
      row.approx_tokens = lazy.summary().approxTokens
      const view = (workspace: string, agentName: string, routed: boolean) =>
        createView(
          {
            id: `${wsName}/${agent}/${row.step}`,
            dialect: meta.dialect,
            kind: 'step',
            path: meta.endpoint,
            workspace,
            agent: agentName,
            body,
            route: routed
              ? {
                  provider: meta.route.provider,
                  model: meta.route.model,
                  role: meta.route.role ?? null,
                  plugin: null,
                }
              : null,
            response: null,
            replay: true,
          },
          lazy,
        )
      let hook = 'identify'
      try {
        const from = meta.identified
        const who = await decide([p], 'identify', () =>
          view(from?.from_workspace ?? meta.workspace, from?.from_agent ?? meta.agent, false),
        )
        row.identify = who?.decision ?? null
        hook = 'route'
        const where = await decide([p], 'route', () =>
          view(who?.decision.workspace ?? meta.workspace, who?.decision.agent ?? meta.agent, true),
        )
        row.route = where?.decision ?? null
      } catch (err) {
        const message = err instanceof HoldfastError ? err.message : String(err)
        row.error = { hook, message }
      }
    }
  } finally {
    await closePlugin(p, log)
    fs.rmSync(scratch, { recursive: true, force: true })
  }
  return rows
}

/** `role long, model m` from the decision's set fields, `-` for no decision. */
function cell(d: IdentifyDecision | RouteDecision | null, keys: string[]): string {
  if (!d) return '-'
  const fields = d as Record<string, string | undefined>
  return keys.flatMap((k) => (fields[k] ? [`${k} ${fields[k]}`] : [])).join(', ')
}

export function registerReplay(program: Command): void {
  program
    .command('replay')
    .description(
      "run a plugin's deciding hooks over an agent's recorded steps and print what it would decide",
    )
    .argument('<ws>', 'workspace')
    .argument('<agent>', 'agent')
    .requiredOption(
      '--plugin <plugin>',
      'a built-in or package name, a .js/.mjs/.cjs file, or a name holdfast.yaml lists',
    )
    .option(
      '--options <json>',
      "the plugin's options as JSON (default: as holdfast.yaml lists them, else {})",
    )
    .option('--home <dir>', 'holdfast home (default $HOLDFAST_HOME, then ~/.holdfast)')
    .option('--json', 'print JSON')
    .action(
      async (
        ws: string,
        agent: string,
        o: { plugin: string; options?: string; home?: string; json?: boolean },
      ) => {
        const home = resolveHome(o.home)
        const loaded = await loadOne(o.plugin, home, loadConfig(home)).catch((err: Error) => {
          throw new CliError(err.message)
        })
        if (o.options !== undefined) {
          try {
            loaded.options = JSON.parse(o.options) as unknown
          } catch (err) {
            throw new CliError(`--options is not JSON: ${(err as Error).message}`)
          }
        }
        const rows = await replay(home, ws, agent, loaded)
        if (rows.some((r) => r.error)) process.exitCode = 1 // live, that step would have failed closed
        if (o.json) return printJson(rows)
        if (rows.length === 0) {
          process.stdout.write(`no steps recorded for ${ws}/${agent}\n`)
          return
        }
        process.stdout.write(
          `plugin ${loaded.definition.name} over ${ws}/${agent}: what it would decide (nothing is sent)\n`,
        )
        process.stdout.write(
          table(
            ['NNN', '~tokens', 'recorded', 'identify', 'route', 'why'],
            rows.map((r) => [
              r.step,
              r.approx_tokens,
              `${r.recorded.agent} ${r.recorded.role ? `role ${r.recorded.role} → ` : ''}${r.recorded.model ?? '-'}`,
              r.error?.hook === 'identify' || r.error?.hook === 'record'
                ? `error: ${r.error.message}`
                : cell(r.identify, ['workspace', 'agent']),
              r.error?.hook === 'route'
                ? `error: ${r.error.message}`
                : cell(r.route, ['role', 'provider', 'model']),
              [r.identify?.why, r.route?.why].filter(Boolean).join('; ') || '-',
            ]),
          ),
        )
      },
    )
}
