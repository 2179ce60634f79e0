/**
 * The sentences of loaded tools (DESIGN §7): refusals of a load, an unload or a routed call, and
 * who can call a loaded tool. Invariant: one function per sentence, so the CLI, the admin API, the
 * `clients` tool and the history closure say exactly the same thing. Pure; names are JSON-quoted.
 */

const q = (s: string): string => JSON.stringify(s)

/** Also what planLoad (core/loaded-set) refuses an unadvertised tool with. */
export const notAdvertised = (client: string, tool: string): string =>
  `client ${q(client)} advertises no tool ${q(tool)} right now`

/** A routed call to a name this conversation has not loaded; also the closure's description. */
export const notLoaded = (name: string): string =>
  `no tool ${q(name)} is loaded in this conversation, so a call to it is refused; load it again with the clients tool to use it`

export const unknownClient = (client: string): string => `holdfast.yaml declares no client ${q(client)}`

export const notRegistered = (client: string, ws: string): string =>
  `client ${q(client)} is not registered in workspace ${q(ws)} (list ${q(ws)} under clients.${client}.workspaces in holdfast.yaml and restart holdfast serve)`

export const unreachable = (client: string, why: string): string =>
  `client ${q(client)} cannot be reached right now: ${why}`

export const timedOut = (client: string, tool: string, ms: number): string =>
  `client ${q(client)} did not answer the call to ${q(tool)} within ${ms} ms`

export const closedDuringCall = (client: string, tool: string, why: string): string =>
  `client ${q(client)} went away during the call to ${q(tool)}: ${why}`

export const callFailed = (client: string, tool: string, why: string): string =>
  `client ${q(client)} refused the call to ${q(tool)}: ${why}`

export const notAnObject = (name: string): string => `the input to ${q(name)} must be a JSON object`

export const nothingLoadedFrom = (client: string, ws: string, agent: string): string =>
  `nothing from client ${q(client)} is loaded for ${ws}/${agent}`

/** What `load` tells the operator after its list of names: who can actually run the tools. */
export const whoCanCall = (ws: string, agent: string): string =>
  `A harness connected to this agent’s MCP endpoint (/w/${encodeURIComponent(ws)}/a/${encodeURIComponent(agent)}/mcp) or routing calls through POST /_holdfast/tools/call can run them; a harness that does neither sees them but answers its own "unknown tool" error if the model calls one.`

/** How the harness that called the `clients` tool names the loaded tools the model can call. */
export interface Caller {
  /** The name the model calls a presented name by (Claude Code on the MCP endpoint: `mcp__holdfast__fx_echo`). */
  callableAs(presented: string): string
  /** The harness may defer new tools behind its tool search (Claude Code 2.1.332's `ToolSearch`). */
  deferred: boolean
}

/** A harness that routes calls by presented name (`POST /_holdfast/tools/call`). */
export const ROUTING_CALLER: Caller = { callableAs: (name) => name, deferred: false }

const code = (s: string): string => `\`${s}\``

/** What the model reads after its own load: the names it can call, from when, and nothing else. */
export function loadedForModel(names: readonly string[], caller: Caller): string {
  const each = names.map((n) => {
    const as = caller.callableAs(n)
    return as === n ? code(n) : `${code(n)} as ${code(as)}`
  })
  const one = names.length === 1
  const fetch = caller.deferred
    ? ` If ${one ? 'it is' : 'they are'} listed as deferred, fetch ${one ? 'it' : 'them'} with your tool search (ToolSearch) first.`
    : ''
  return `Loaded. Callable from your next turn: ${each.join(', ')}.${fetch}`
}

/** What the model reads after its own unload. */
export function unloadedForModel(names: readonly string[], caller: Caller): string {
  const each = names.map((n) => code(caller.callableAs(n)))
  return `Unloaded. No longer callable: ${each.join(', ')}.`
}

export const loadRefused = (ws: string, agent: string, why: string): string =>
  `load into ${ws}/${agent} refused, nothing was written: ${why}`

export const unloadRefused = (ws: string, agent: string, why: string): string =>
  `unload from ${ws}/${agent} refused, nothing was written: ${why}`
