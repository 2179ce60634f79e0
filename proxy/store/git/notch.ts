/**
 * Refs to notches (`--from`): a commit (or an unambiguous prefix), `agents/<agent>` (its tip),
 * `<agent>@<NNN>` (the commit of that step), or `config/<name>` (a clean start). Invariant: a fork
 * is carried as the resolved commit id (refs move); only a clean start keeps `config/<name>`.
 */
import { agentRef, configRef, stepOfSubject } from '../../core/layout'
import { formatStep } from '../../core/naming'
import { readCommitInfo, resolveRevision } from './read'
import type { Repo } from './repo'
import { readRef } from './refs'

export type Notch =
  | { kind: 'clean'; ref: string; lineage: string; commit: string }
  | { kind: 'fork'; ref: string; commit: string; step?: { agent: string; n: number } }

/** The commit of step `n` on `agents/<agent>`, walking first parents from the tip. */
export async function stepCommit(repo: Repo, agent: string, n: number): Promise<string | undefined> {
  let oid = await readRef(repo, agentRef(agent))
  while (oid) {
    const info = await readCommitInfo(repo, oid)
    const s = stepOfSubject(info.message)
    if (s && s.agent === agent) {
      if (s.n === n) return oid
      if (s.n < n) return undefined
    }
    oid = info.parents[0]
  }
  return undefined
}

/** Resolve a `--from` value; throws an Error naming the ref when it resolves to nothing. */
export async function resolveNotch(repo: Repo, from: string): Promise<Notch> {
  if (from === '') throw new Error('--from is empty: an attempt forks from a ref')
  const config = /^(?:refs\/heads\/)?config\/(.+)$/.exec(from)
  if (config) {
    const lineage = config[1] as string
    const commit = await readRef(repo, configRef(lineage))
    if (!commit) throw new Error(`--from ${from}: no config lineage "${lineage}"`)
    return { kind: 'clean', ref: `config/${lineage}`, lineage, commit }
  }
  const at = /^([^@/]+)@(\d+)$/.exec(from)
  if (at) {
    const agent = at[1] as string
    const n = Number(at[2])
    const commit = await stepCommit(repo, agent, n)
    if (!commit) throw new Error(`--from ${from}: agent "${agent}" has no committed step ${formatStep(n)}`)
    return { kind: 'fork', ref: from, commit, step: { agent, n } }
  }
  const commit = await resolveRevision(repo, from).catch((err: Error) => {
    throw new Error(`--from ${from}: ${err.message}`)
  })
  if (!commit) throw new Error(`--from ${from}: no such commit or ref`)
  const step = stepOfSubject((await readCommitInfo(repo, commit)).message)
  return { kind: 'fork', ref: from, commit, ...(step ? { step } : {}) }
}
