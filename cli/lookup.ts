/**
 * Finding what a command names: the shared lookups (proxy/report/lookup), with a refusal turned
 * into the CLI's own error. Invariant: every command refuses an unknown workspace or agent the same
 * way (exit 1, one sentence naming what exists), and looking never creates anything.
 */
import { AskError, type AskOptions, askServe } from '../proxy/admin/ask'
import {
  agentsOf,
  existingAgent as findAgent,
  existingWorkspace as findWorkspace,
  NotFound,
  workspacesSentence,
} from '../proxy/report/lookup'
import type { Workspace } from '../proxy/store/workspace'
import { CliError } from './output'

export { agentsOf, workspacesSentence }

/** A report's refusal as the CLI's one-line error (exit 1); anything else unchanged. */
export function asCliError(err: unknown): never {
  if (err instanceof NotFound) throw new CliError(err.message)
  throw err
}

/** The named workspace; refused with the list of existing ones when it does not exist. */
export function existingWorkspace(home: string, name: string): Promise<Workspace> {
  return findWorkspace(home, name).catch(asCliError)
}

/** `agent` when the workspace has it; refused with the list of its agents otherwise. */
export function existingAgent(ws: Workspace, agent: string): Promise<string> {
  return findAgent(ws, agent).catch(asCliError)
}

/**
 * Ask the home's running serve (proxy/admin/ask); what goes wrong is the CliError that says it,
 * a serve that stopped since the caller found it included.
 */
export async function askRunningServe<T>(home: string, route: string, opts: AskOptions = {}): Promise<T> {
  try {
    const answer = await askServe<T>(home, route, opts)
    if (answer === undefined) throw new CliError(`holdfast serve on ${home} stopped before it was asked`)
    return answer
  } catch (err) {
    if (err instanceof AskError) throw new CliError(err.message)
    throw err
  }
}
