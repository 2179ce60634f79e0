/**
 * Team config from the remote: fetch its `config/*` lineages into `refs/remotes/holdfast/config/*`,
 * then move each local `refs/heads/config/<name>` that the remote's tip fast-forwards with `git
 * update-ref <new> <old>`: git's own ref update, so the workspace's reference-transaction hook
 * validates `providers.yaml` exactly as for a local config commit, and the proxy follows the new
 * tip from its next step. Invariant: a lineage that diverged, that the hook refuses, or that moved
 * here meanwhile stays where it was, and the report says so; a local lineage ahead of the remote is
 * left alone (publishing it is the user's `git push`). Nothing is pushed.
 */
import { installHooks } from '../store/hook-install'
import { isRefComponent } from '../core/naming'
import { configRef } from '../core/layout'
import { listRefs, readRef } from '../store/git'
import type { Workspace } from '../store/workspace'
import { failure, runGitIn } from './git'
import { REMOTE, shownUrl, TRACKING_CONFIG_PREFIX } from './refs'
import type { LineageResult, PullReport } from './state'

const ZERO = '0'.repeat(40)

/** Whether `a` is an ancestor of (or equal to) `b`; undefined when git could not tell. */
async function isAncestor(gitdir: string, a: string, b: string): Promise<boolean | undefined> {
  const r = await runGitIn(gitdir, ['merge-base', '--is-ancestor', a, b])
  return r.code === 0 ? true : r.code === 1 ? false : undefined
}

/** The hook's refusal (`holdfast: refusing <ref>: <sentence>`) as its sentence, else git's reason. */
function refusalOf(stderr: string): { hook: boolean; reason: string } {
  const m = /holdfast: refusing \S+: (.*)/.exec(stderr)
  if (m) return { hook: true, reason: (m[1] as string).trim() }
  return { hook: false, reason: failure({ code: 1, stdout: '', stderr, timedOut: false }) }
}

/** Move one local lineage to the remote's tip when that is a fast-forward (or it is new here). */
async function followLineage(ws: Workspace, lineage: string, remote: string): Promise<LineageResult> {
  const gitdir = ws.repo.gitdir
  const local = (await readRef(ws.repo, configRef(lineage))) ?? null
  const base = { lineage, local, remote }
  if (local === remote) return { ...base, outcome: 'up-to-date' }
  if (local !== null) {
    const forward = await isAncestor(gitdir, local, remote)
    if (forward === undefined)
      return { ...base, outcome: 'failed', reason: 'git could not compare the commits' }
    if (!forward) {
      const behind = await isAncestor(gitdir, remote, local)
      return behind
        ? { ...base, outcome: 'ahead', reason: `config/${lineage} has local commits the remote lacks` }
        : {
            ...base,
            outcome: 'diverged',
            reason: `config/${lineage} and the remote's have diverged; merge them with git, then push`,
          }
    }
  }
  const r = await runGitIn(gitdir, [
    'update-ref',
    '-m',
    `holdfast remote pull: ${REMOTE}/config/${lineage}`,
    configRef(lineage),
    remote,
    local ?? ZERO,
  ])
  if (r.code === 0) return { ...base, outcome: local === null ? 'created' : 'moved' }
  const why = refusalOf(r.stderr)
  return { ...base, outcome: why.hook ? 'refused' : 'failed', reason: why.reason }
}

/**
 * Fetch the remote's config lineages and follow each that fast-forwards. The hook is installed
 * (or refreshed) first: without it nothing would validate what comes in, so nothing moves.
 */
export async function pullConfig(
  ws: Workspace,
  url: string,
  opts: { timeoutMs: number },
): Promise<PullReport> {
  const at = new Date().toISOString()
  const report: PullReport = { at, url: shownUrl(url), error: null, lineages: [] }
  const hook = await installHooks(ws.home, ws.name)
  if (!hook.ok) {
    report.error = `the git hook that validates config could not be installed (${hook.error}); nothing was moved`
    return report
  }
  const fetched = await runGitIn(
    ws.repo.gitdir,
    [
      'fetch',
      '--quiet',
      '--no-tags',
      '--no-write-fetch-head',
      '--prune',
      '--refmap=',
      REMOTE,
      `+refs/heads/config/*:${TRACKING_CONFIG_PREFIX}*`,
    ],
    { timeoutMs: opts.timeoutMs, remote: true },
  )
  if (fetched.code !== 0) {
    report.error = failure(fetched, opts.timeoutMs)
    return report
  }
  for (const { ref, oid } of await listRefs(ws.repo, TRACKING_CONFIG_PREFIX)) {
    const lineage = ref.slice(TRACKING_CONFIG_PREFIX.length)
    if (!isRefComponent(lineage)) {
      const reason = `config/${lineage} is not a lineage name (one ref component)`
      report.lineages.push({ lineage, outcome: 'failed', local: null, remote: oid, reason })
      continue
    }
    report.lineages.push(await followLineage(ws, lineage, oid))
  }
  return report
}
