/**
 * `holdfast clients list|get|load|unload|loaded`: the tool hosts and what an agent has loaded.
 * With a running server (serve.json naming a live pid) list/get/load/unload go through its admin
 * API; without one the command registers clients from holdfast.yaml, connects to the hosts itself
 * and kills them before it exits. Invariant: both paths run the same acts (tools/acts), so they
 * print the same sentences; `--json` prints the admin API's answer. `loaded` reads the file.
 */
import { askRunningServe } from './lookup'
import type { Command } from 'commander'
import { loadConfig } from '../proxy/store/config'
import { resolveHome } from '../proxy/store/home'
import { readServeInfo } from '../proxy/store/serve-lock'
import { createLogger } from '../proxy/process/log'
import { type Act, getClient, listClients, loadedTools, loadTools, unloadTools } from '../proxy/tools/acts'
import type { ToolHosts } from '../proxy/tools/hosts'
import { syncRegistrations } from '../proxy/tools/registration'
import { CliError, printJson } from './output'

interface Opts {
  home?: string
  json?: boolean
}

type Answer = { message: string } & Record<string, unknown>

/** One request to the running server's admin API; a refusal becomes the CliError it names. */
const viaServer = (home: string, method: 'GET' | 'POST', path: string, body?: object): Promise<Answer> =>
  askRunningServe<Answer>(home, path, { method, ...(body ? { body } : {}) })

/** The act run here, with this command's own connections to the hosts (closed before returning). */
async function locally(home: string, act: (hosts: ToolHosts) => Promise<Act<object>>): Promise<Answer> {
  let config
  try {
    config = loadConfig(home)
    await syncRegistrations(home, config)
  } catch (err) {
    throw new CliError((err as Error).message)
  }
  const frozen = config
  // Loaded here, not at the top: every other command would pay for the MCP SDK.
  const { ToolHosts } = await import('../proxy/tools/hosts')
  const hosts = new ToolHosts(home, () => frozen, createLogger(process.env.HOLDFAST_LOG_LEVEL ?? 'warn'))
  try {
    const r = await act(hosts)
    if (!r.ok) throw new CliError(r.message)
    return { message: r.message, ...r.body }
  } finally {
    await hosts.close()
  }
}

function print(answer: Answer, opts: Opts): void {
  if (opts.json) printJson(answer)
  else process.stdout.write(`${answer.message}\n`)
}

const query = (params: Record<string, string | undefined>): string => {
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.set(k, v)
  const s = q.toString()
  return s ? `?${s}` : ''
}

export function registerClients(program: Command): void {
  const clients = program
    .command('clients')
    .description('tool hosts (MCP servers) and the tools an agent has loaded from them')
  const common = (c: Command): Command =>
    c
      .option('--home <dir>', 'holdfast home (default $HOLDFAST_HOME, then ~/.holdfast)')
      .option('--json', 'print JSON')

  common(clients.command('list'))
    .description('each client: connected or not, its tool count, when its advertisement was observed')
    .option('--ws <workspace>', 'only the clients registered in this workspace')
    .action(async (opts: Opts & { ws?: string }) => {
      const home = resolveHome(opts.home)
      const info = readServeInfo(home)
      const answer = info
        ? await viaServer(home, 'GET', `/_holdfast/clients/list${query({ workspace: opts.ws })}`)
        : await locally(home, (h) => listClients(h, opts.ws))
      print(answer, opts)
    })

  common(clients.command('get'))
    .description('one client: each tool, its description, and the name it loads as')
    .argument('<client>', 'client name')
    .action(async (client: string, opts: Opts) => {
      const home = resolveHome(opts.home)
      const info = readServeInfo(home)
      const answer = info
        ? await viaServer(home, 'GET', `/_holdfast/clients/get${query({ client })}`)
        : await locally(home, (h) => getClient(h, client))
      print(answer, opts)
    })

  common(clients.command('load'))
    .description("freeze tools of a client into an agent's loaded set (all advertised now, or nothing)")
    .argument('<ws>', 'workspace')
    .argument('<agent>', 'agent')
    .argument('<client>', 'client name')
    .argument('<tools...>', 'tool names as the client advertises them')
    .action(async (ws: string, agent: string, client: string, tools: string[], opts: Opts) => {
      const home = resolveHome(opts.home)
      const info = readServeInfo(home)
      const answer = info
        ? await viaServer(home, 'POST', '/_holdfast/clients/load', {
            workspace: ws,
            agent,
            client,
            tools,
          })
        : await locally(home, (h) => loadTools(h, ws, agent, client, tools))
      print(answer, opts)
    })

  common(clients.command('unload'))
    .description(
      "remove tools of a client from an agent's loaded set (all of that client's when none are named)",
    )
    .argument('<ws>', 'workspace')
    .argument('<agent>', 'agent')
    .argument('<client>', 'client name')
    .argument('[tools...]', 'tool names as the client advertises them')
    .action(async (ws: string, agent: string, client: string, tools: string[], opts: Opts) => {
      const home = resolveHome(opts.home)
      const info = readServeInfo(home)
      const answer = info
        ? await viaServer(home, 'POST', '/_holdfast/clients/unload', {
            workspace: ws,
            agent,
            client,
            tools,
          })
        : await locally(home, (h) => unloadTools(h.home, ws, agent, client, tools))
      print(answer, opts)
    })

  common(clients.command('loaded'))
    .description("an agent's loaded set: presented names, clients, advertised names")
    .argument('<ws>', 'workspace')
    .argument('<agent>', 'agent')
    .action((ws: string, agent: string, opts: Opts) => {
      const r = loadedTools(resolveHome(opts.home), ws, agent)
      if (!r.ok) throw new CliError(r.message)
      print({ message: r.message, ...r.body }, opts)
    })
}
