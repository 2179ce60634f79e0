/**
 * The operations on clients and loaded sets (DESIGN §7) — list, get, load, unload, loaded — each
 * answering an Act: a message for people and models plus a JSON body, or a refusal with an error
 * code. The CLI (local or through the server), the admin API and the `clients` tool all call these,
 * so they say the same sentences. Invariant: load and unload are whole-or-nothing; a refusal
 * writes nothing. An agent with nothing loaded has the empty set.
 */
import type { ErrorCode } from '../core/errors'
import { planLoad, planUnload, presentedName, type LoadedEntry } from '../core/loaded-set'
import { checkName } from '../core/naming'
import * as say from '../core/tool-sentences'
import { addToLoadedSet, readLoadedSet, updateLoadedSet } from '../store/loaded-sets'
import type { ClientView, ToolHosts } from './hosts'
import { isRegistered } from './registration'

export type Act<T> = { ok: true; message: string; body: T } | { ok: false; code: ErrorCode; message: string }

export interface LoadedRow {
  name: string
  client: string
  tool: string
  description: string
}

const refuse = (code: ErrorCode, message: string): { ok: false; code: ErrorCode; message: string } => ({
  ok: false,
  code,
  message,
})

function badNames(pairs: [Parameters<typeof checkName>[0], string][]): string | undefined {
  for (const [kind, value] of pairs) {
    const bad = checkName(kind, value)
    if (bad !== undefined) return bad
  }
  return undefined
}

const rows = (set: readonly LoadedEntry[]): LoadedRow[] =>
  set.map((e) => ({
    name: presentedName(e),
    client: e.client,
    tool: e.tool.name,
    description: e.tool.description,
  }))

function describeView(v: ClientView): string {
  const state = v.connected ? 'connected' : v.error ? `not connected (${v.error})` : 'not connected'
  const seen = v.observed_at ? `observed at ${v.observed_at}` : 'never observed'
  const where = v.workspaces.length ? v.workspaces.join(', ') : '-'
  return `${v.client}: ${v.transport}, ${state}, ${v.tools.length} tools, ${seen}, workspaces: ${where}`
}

/** Every declared client (only those registered in `ws`, when given), listed live when it can be. */
export async function listClients(hosts: ToolHosts, ws?: string): Promise<Act<{ clients: ClientView[] }>> {
  if (ws !== undefined) {
    const bad = badNames([['workspace', ws]])
    if (bad) return refuse('BAD_NAME', bad)
  }
  const names = hosts.declared().filter((c) => ws === undefined || isRegistered(hosts.home, c, ws))
  const views = (await Promise.all(names.map((c) => hosts.view(c)))).filter((v) => v !== undefined)
  const none =
    ws === undefined
      ? 'holdfast.yaml declares no clients'
      : `no client is registered in workspace ${JSON.stringify(ws)}`
  const message = views.length ? views.map(describeView).join('\n') : none
  return { ok: true, message, body: { clients: views } }
}

/** One client's tools: description and the name each loads as. */
export async function getClient(hosts: ToolHosts, client: string): Promise<Act<ClientView>> {
  const bad = badNames([['client', client]])
  if (bad) return refuse('BAD_NAME', bad)
  const v = await hosts.view(client)
  if (!v) return refuse('CLIENT_UNKNOWN', say.unknownClient(client))
  const lines = [describeView(v)]
  for (const t of v.tools) {
    lines.push(`  ${t.name} (loads as ${client}_${t.name})${t.description ? `: ${t.description}` : ''}`)
  }
  for (const r of v.rejected) lines.push(`  not loadable: ${JSON.stringify(r.name)}: ${r.why}`)
  return { ok: true, message: lines.join('\n'), body: v }
}

/** The agent's loaded set, in presented-name order. */
export function loadedTools(home: string, ws: string, agent: string): Act<{ tools: LoadedRow[] }> {
  const bad = badNames([
    ['workspace', ws],
    ['agent', agent],
  ])
  if (bad) return refuse('BAD_NAME', bad)
  const set = rows(readLoadedSet(home, ws, agent))
  const message = set.length
    ? [
        `${set.length} loaded for ${ws}/${agent}:`,
        ...set.map((r) => `  ${r.name} (client ${r.client}, tool ${r.tool})`),
      ].join('\n')
    : `nothing is loaded for ${ws}/${agent}`
  return { ok: true, message, body: { tools: set } }
}

/** Freeze `tools` of `client` into the agent's set: every one advertised now, or nothing written. */
export async function loadTools(
  hosts: ToolHosts,
  ws: string,
  agent: string,
  client: string,
  tools: readonly string[],
): Promise<Act<{ loaded: string[]; tools: LoadedRow[] }>> {
  const bad = badNames([
    ['workspace', ws],
    ['agent', agent],
    ['client', client],
  ])
  if (bad) return refuse('BAD_NAME', bad)
  if (!hosts.spec(client))
    return refuse('LOAD_REFUSED', say.loadRefused(ws, agent, say.unknownClient(client)))
  if (!isRegistered(hosts.home, client, ws))
    return refuse('LOAD_REFUSED', say.loadRefused(ws, agent, say.notRegistered(client, ws)))
  // No lock held while the host is listed: addToLoadedSet reads and writes the set as one act.
  const v = (await hosts.view(client)) as ClientView
  const stale = v.error
    ? ` (the host cannot be listed now: ${v.error}; ${v.observed_at ? `its advertisement observed at ${v.observed_at} was used` : 'no advertisement was ever observed'})`
    : ''
  const plan = planLoad(client, v.tools, tools)
  if (!plan.ok) return refuse('LOAD_REFUSED', say.loadRefused(ws, agent, plan.error + stale))
  const set = await addToLoadedSet(hosts.home, ws, agent, plan.value)
  const names = plan.value.map(presentedName)
  const message = `loaded ${names.join(', ')} into ${ws}/${agent} from client ${JSON.stringify(client)}${stale}. ${say.whoCanCall(ws, agent)}`
  return { ok: true, message, body: { loaded: names, tools: rows(set) } }
}

/** Remove `tools` of `client` (all of that client's, when none are named), whole or nothing. */
export async function unloadTools(
  home: string,
  ws: string,
  agent: string,
  client: string,
  tools: readonly string[],
): Promise<Act<{ unloaded: string[]; tools: LoadedRow[] }>> {
  const bad = badNames([
    ['workspace', ws],
    ['agent', agent],
    ['client', client],
  ])
  if (bad) return refuse('BAD_NAME', bad)
  let names: string[] = []
  const done = await updateLoadedSet(home, ws, agent, (existing) => {
    const mine = existing.filter((e) => e.client === client)
    names = tools.length ? tools.map((t) => `${client}_${t}`) : mine.map(presentedName)
    if (names.length === 0)
      return { ok: false, error: say.unloadRefused(ws, agent, say.nothingLoadedFrom(client, ws, agent)) }
    const plan = planUnload(existing, names)
    return plan.ok ? plan : { ok: false, error: say.unloadRefused(ws, agent, plan.error) }
  })
  if (!done.ok) return refuse('LOAD_REFUSED', done.error)
  const gone = [...new Set(names)]
  const message = `unloaded ${gone.join(', ')} from ${ws}/${agent}; the next step's hold re-sends the previous tools while the cache prefix is intact`
  return { ok: true, message, body: { unloaded: gone, tools: rows(done.value) } }
}
