/**
 * Finding what a command names: a workspace that exists, an agent with steps. Invariant: every
 * command refuses an unknown workspace or agent the same way (exit 1, one sentence naming what
 * exists), and looking never creates anything.
 */
import { journalAgents } from '../proxy/record/journal-read'
import { journalOf } from '../proxy/record/read'
import { listRefs } from '../proxy/store/git-refs'
import { assertName } from '../proxy/core/naming'
import { listWorkspaces, Workspace } from '../proxy/store/workspace'
import { TeammateWorkspace } from '../proxy/remote/teammates'
import { CliError } from './output'

/** "a, b, c", or the sentence for none. */
function named(names: readonly string[], none: string): string {
  return names.length === 0 ? none : names.join(', ')
}

/** The sentence that says which workspaces exist (for refusals and `roles` without `--ws`). */
export async function workspacesSentence(home: string): Promise<string> {
  const names = await listWorkspaces(home)
  return names.length === 0
    ? `${home} has no workspace yet (a workspace is created by its first request, or by \`holdfast config set-role <ws> … --create\`)`
    : `workspaces in ${home}: ${names.join(', ')}`
}

/** The named workspace; refused with the list of existing ones when it does not exist. */
export async function existingWorkspace(home: string, name: string): Promise<Workspace> {
  const ws = new Workspace(home, assertName('workspace', name))
  if (!ws.exists()) throw new CliError(`no workspace "${name}" in ${home}; ${await workspacesSentence(home)}`)
  return ws
}

/**
 * The named workspace, or (`--machine`) a teammate machine's agents in it, fetched from the remote
 * by `holdfast remote fetch`: read like the workspace's own.
 */
export async function readableWorkspace(home: string, name: string, machine?: string): Promise<Workspace> {
  const ws = await existingWorkspace(home, name)
  if (machine === undefined) return ws
  const view = new TeammateWorkspace(home, ws.name, assertName('agent', machine))
  if ((await agentsOf(view)).length === 0)
    throw new CliError(
      `no agents of machine "${machine}" in workspace "${name}"; bring them in with \`holdfast remote fetch ${name} ${machine}\``,
    )
  return view
}

/** Every agent of a workspace with a branch or a journaled step, sorted. */
export async function agentsOf(ws: Workspace): Promise<string[]> {
  const names = new Set<string>()
  for (const { ref } of await listRefs(ws.repo, ws.agentsPrefix)) names.add(ref.slice(ws.agentsPrefix.length))
  for (const a of journalAgents(ws.journalDir)) {
    if (journalOf(ws, a).size > 0) names.add(a)
  }
  return [...names].sort()
}

/** `agent` when the workspace has it; refused with the list of its agents otherwise. */
export async function existingAgent(ws: Workspace, agent: string): Promise<string> {
  assertName('agent', agent)
  const agents = await agentsOf(ws)
  if (!agents.includes(agent)) {
    throw new CliError(
      `no agent "${agent}" in workspace "${ws.name}"; its agents: ${named(agents, 'none yet')}`,
    )
  }
  return agent
}
