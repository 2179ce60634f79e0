/**
 * A notch's commit: the commit of step `n` on an agent's branch, for Fork from here.
 * Invariant: the answer is the commit git names for that step (store/git/notch's
 * stepCommit); the branch is walked from its tip once per agent, later only what was committed since.
 */
import { agentRef, stepOfSubject } from '../core/layout'
import { readCommitInfo, readRef, stepCommit } from '../store/git'
import type { Workspace } from '../store/workspace'

/** Each agent's step commits found so far (from its tip down), by `<gitdir>\0<agent>`. */
const stepCommits = new Map<string, { tip: string; commits: Map<number, string> }>()

/**
 * The commit of step `n` on the agent's branch. The first question walks the branch from its tip
 * once (as store/git/notch's stepCommit does); later ones walk only what was committed since.
 */
export async function notchCommit(ws: Workspace, agent: string, n: number): Promise<string | undefined> {
  const tip = await readRef(ws.repo, agentRef(agent))
  if (!tip) return undefined
  const key = `${ws.repo.gitdir}\0${agent}`
  const known = stepCommits.get(key)
  if (known?.tip === tip) return known.commits.get(n)
  const commits = new Map(known?.commits)
  for (let oid: string | undefined = tip; oid && oid !== known?.tip;) {
    const info = await readCommitInfo(ws.repo, oid)
    const s = stepOfSubject(info.message)
    if (s?.agent === agent) commits.set(s.n, oid)
    oid = info.parents[0]
  }
  stepCommits.set(key, { tip, commits })
  return commits.get(n) ?? (await stepCommit(ws.repo, agent, n))
}
