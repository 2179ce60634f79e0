/**
 * The roles a step resolves against (`holdfast roles`, the view's Fork from here): read at the
 * followed config of a commit, as the dispatcher checks them, headed with what is followed. The
 * model shown is the model that will run. Invariant: a config that cannot be resolved or parsed is
 * a refusal naming why, never an empty list.
 */
import type { HoldfastConfig } from '../store/config'
import { ConfigReader } from '../store/config/lineage'
import { resolveRevision } from '../store/git'
import type { Workspace } from '../store/workspace'
import { pullRefusals, readPullReport } from '../remote/state'
import { NotFound } from './lookup'

export interface RolesReport {
  at: string
  commit: string
  heading: string
  /** Config lineages of the remote named holdfast this workspace did not follow, and why (remote/config.json). */
  remote: string[]
  roles: {
    role: string
    provider: string
    model: string
    max_output_tokens: number | null
    row_declared: boolean
  }[]
}

/** The roles at the followed config of `at` (a commit or ref); `reader` may be a server's, with its caches. */
export async function rolesAt(
  ws: Workspace,
  rows: HoldfastConfig['providers'],
  at: string,
  reader = new ConfigReader(ws.repo),
): Promise<RolesReport> {
  const rev = await resolveRevision(ws.repo, at).catch((err: Error) => {
    throw new NotFound(`--at ${at}: ${err.message}`)
  })
  if (!rev) throw new NotFound(`--at ${at}: no such commit or ref in workspace "${ws.name}"`)
  // Keyed by the commit (no agent name has a colon): a reader that lives on (the server's) answers again from its cache.
  const resolved = await reader.resolve(`commit:${rev}`, () => Promise.resolve(rev))
  if (!resolved.ok) throw new NotFound(`roles at ${at}: ${resolved.message}`)
  const f = resolved.followed
  if (!resolved.roles.ok) throw new NotFound(resolved.roles.error)
  const heading =
    f.kind === 'tip'
      ? `follows ${f.ref.replace('refs/heads/', '')} at ${f.commit.slice(0, 8)}`
      : `held at ${f.commit.slice(0, 8)}: ${f.diverged.length} diverged lineages (${f.diverged.map((r) => r.replace('refs/heads/', '')).join(', ')})`
  const roles = Object.entries(resolved.roles.value.roles)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([role, r]) => ({
      role,
      provider: r.provider,
      model: r.model,
      max_output_tokens: r.max_output_tokens ?? null,
      row_declared: Object.hasOwn(rows, r.provider),
    }))
  const remote = pullRefusals(readPullReport(ws.home, ws.name))
  return { at, commit: f.commit, heading, remote, roles }
}
