/**
 * The `clients` tool (DESIGN §7): the agent's own way to list tool hosts, read one, and load or
 * unload its tools — `{op: "list"|"get"|"load"|"unload", client, tools}`. Its definition is
 * published per dialect (GET /_holdfast/clients/tool) for a harness to offer; its calls arrive
 * through /_holdfast/tools/call or the MCP endpoint and are answered as plain text. Invariant:
 * list, get and every refusal answer the Act's own message (the CLI's words); a load or unload
 * answers the model only what it needs — the names it can call, as its harness names them
 * (`caller`), from its next turn; a refusal is `is_error: true`.
 */
import { isObject, type Json, type JsonObject } from '../core/json'
import type { Dialect } from '../core/dialect'
import { getClient, listClients, loadTools, unloadTools, type Act } from './acts'
import { refusal, type ToolHosts, type ToolResult } from './hosts'
import { type Caller, loadedForModel, ROUTING_CALLER, unloadedForModel } from '../core/tool-sentences'

export const CLIENTS_TOOL_NAME = 'clients'

export const CLIENTS_TOOL_DESCRIPTION =
  'List the tool hosts (clients) of this workspace, read one, and load or unload its tools for this conversation. ' +
  'op "list": every client registered here; op "get" {client}: its tools and the names they load as; ' +
  'op "load" {client, tools}: make those tools callable from the next turn on (all or nothing); ' +
  'op "unload" {client, tools?}: remove them (all of that client\'s when tools is omitted).'

export const CLIENTS_TOOL_SCHEMA: JsonObject = {
  type: 'object',
  properties: {
    op: { type: 'string', enum: ['list', 'get', 'load', 'unload'] },
    client: { type: 'string', description: 'the client (tool host) name' },
    tools: {
      type: 'array',
      items: { type: 'string' },
      description: 'tool names as the client advertises them',
    },
  },
  required: ['op'],
}

/** The tool's definition in a dialect's tool format. */
export function clientsToolDefinition(dialect: Dialect): JsonObject {
  return dialect.tool({
    name: CLIENTS_TOOL_NAME,
    description: CLIENTS_TOOL_DESCRIPTION,
    input_schema: CLIENTS_TOOL_SCHEMA,
  })
}

const text = (act: Act<unknown>, ok?: (a: Act<unknown> & { ok: true }) => string): ToolResult => ({
  content: [{ type: 'text', text: act.ok && ok ? ok(act) : act.message }],
  is_error: !act.ok,
})

const strings = (v: Json | undefined): string[] | undefined =>
  Array.isArray(v) && v.every((s) => typeof s === 'string') ? (v as string[]) : undefined

/** Run one op of the `clients` tool for `ws`/`agent`, called by a harness that names tools as `caller` does. */
export async function runClientsTool(
  hosts: ToolHosts,
  ws: string,
  agent: string,
  input: unknown,
  caller: Caller = ROUTING_CALLER,
): Promise<ToolResult> {
  if (!isObject(input)) return refusal('the clients tool takes a JSON object: {op, client, tools}')
  const { op, client } = input
  if (op === 'list') return text(await listClients(hosts, ws))
  if (op !== 'get' && op !== 'load' && op !== 'unload') {
    return refusal('the clients tool needs "op": one of "list", "get", "load", "unload"')
  }
  if (typeof client !== 'string')
    return refusal(`op "${op}" of the clients tool needs "client": a client name`)
  if (op === 'get') return text(await getClient(hosts, client))
  const tools = input.tools === undefined && op === 'unload' ? [] : strings(input.tools)
  if (tools === undefined)
    return refusal(`op "${op}" of the clients tool needs "tools": an array of tool names`)
  if (op === 'load') {
    const act = await loadTools(hosts, ws, agent, client, tools)
    return text(act, (a) => loadedForModel((a.body as { loaded: string[] }).loaded, caller))
  }
  const act = await unloadTools(hosts.home, ws, agent, client, tools)
  return text(act, (a) => unloadedForModel((a.body as { unloaded: string[] }).unloaded, caller))
}
