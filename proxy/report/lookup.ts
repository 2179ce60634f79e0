/**
 * Finding what a report names: a workspace that exists, an agent with steps. Shared by the CLI and
 * the web view. Invariant: an unknown workspace or agent is refused the same way everywhere (a
 * `NotFound` whose one sentence names what exists), and looking never creates anything.
 */
import { journalAgents } from '../record/journal/reader'
import { journalOf } from '../record/read'
import { listRefs } from '../store/git'
import { assertName } from '../core/naming'
import { listWorkspaces, Workspace } from '../store/workspace'
import { TeammateWorkspace } from '../remote/teammates'

/** An agent's steps, committed and pending, in order: what the view's pages list (they read records through report/). */
export { listSteps, type StepRef } from '../record/read'

/** A report asked for something that does not exist; the message names what does. */
export class NotFound extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'NotFound'
  }
}

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
  if (!ws.exists()) throw new NotFound(`no workspace "${name}" in ${home}; ${await workspacesSentence(home)}`)
  return ws
}

/**
 * The named workspace, or (`machine`) a teammate machine's agents in it, fetched from the remote
 * by `holdfast remote fetch`: read like the workspace's own.
 */
export async function readableWorkspace(home: string, name: string, machine?: string): Promise<Workspace> {
  const ws = await existingWorkspace(home, name)
  if (machine === undefined) return ws
  const view = new TeammateWorkspace(home, ws.name, assertName('agent', machine))
  if ((await agentsOf(view)).length === 0)
    throw new NotFound(
      `no agents of machine "${machine}" in workspace "${name}"; bring them in with \`holdfast remote fetch ${name} ${machine}\``,
    )
  return view
}

/** Every agent of a workspace with a branch or a journaled step, sorted. */
export async function agentsOf(ws: Workspace): Promise<string[]> {
  const names = new Set<string>()
  // a teammate's fetched agents (proxy/remote/teammates) are under another prefix, with no journal
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
    throw new NotFound(
      `no agent "${agent}" in workspace "${ws.name}"; its agents: ${named(agents, 'none yet')}`,
    )
  }
  return agent
}
