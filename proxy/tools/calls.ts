/**
 * Routed calls (DESIGN §7): `POST /_holdfast/tools/call {workspace, agent, name, input}`. A
 * presented name goes to its client as the advertised name; `clients` runs the clients tool.
 * Invariant: every outcome is a tool result — a name not loaded in this conversation, a client
 * no longer declared or registered, a tool no longer advertised, a host that does not answer in
 * time, an SDK error — each is refused in band (`is_error: true`, one sentence), never thrown.
 */
import { isObject } from '../core/json'
import { presentedName } from '../core/loaded-set'
import * as say from '../core/tool-sentences'
import type { Caller } from '../core/tool-sentences'
import { readLoadedSet } from '../store/loaded-sets'
import { CLIENTS_TOOL_NAME, runClientsTool } from './clients-tool'
import { refusal, type ToolHosts, type ToolResult } from './hosts'
import { isRegistered } from './registration'

export async function routeCall(
  hosts: ToolHosts,
  ws: string,
  agent: string,
  name: string,
  input: unknown,
  /** How the calling harness names loaded tools (default: by presented name, as a router does). */
  caller?: Caller,
): Promise<ToolResult> {
  if (name === CLIENTS_TOOL_NAME) return runClientsTool(hosts, ws, agent, input, caller)
  const entry = readLoadedSet(hosts.home, ws, agent).find((e) => presentedName(e) === name)
  if (!entry) return refusal(say.notLoaded(name))
  if (!isObject(input)) return refusal(say.notAnObject(name))
  if (!hosts.spec(entry.client)) return refusal(say.unknownClient(entry.client))
  if (!isRegistered(hosts.home, entry.client, ws)) return refusal(say.notRegistered(entry.client, ws))
  return hosts.call(entry.client, entry.tool.name, input)
}
