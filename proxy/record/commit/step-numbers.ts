/**
 * Which step a commit of an agent's branch records, read from its message (core/layout
 * `stepOfSubject`) and remembered per repository by commit id, and where step `n` is on a branch.
 * Invariant: commits are immutable, so a number once read (or made: the committer tells each new
 * commit's) is never read again; any other commit (a dispatch, a config commit) records step 0.
 */
import { stepOfSubject } from '../../core/layout'
import { Lru, readCommitInfo, type Repo } from '../../store/git'

/** Each repository's step commits' numbers, by commit id (a tip's, to know what is on its branch). */
const numbers = new WeakMap<Repo, Lru<number>>()
function numbersOf(repo: Repo): Lru<number> {
  let cache = numbers.get(repo)
  if (!cache) numbers.set(repo, (cache = new Lru<number>(1024)))
  return cache
}

/** Remember that commit `oid` records step `n` (a commit just made). */
export function knowStep(repo: Repo, oid: string, n: number): void {
  numbersOf(repo).set(oid, n)
}

/**
 * The step of `agent` commit `oid` records (0 for any other commit: a dispatch, a config commit),
 * and with `withParent` its first parent. A known commit's number is not read again: the tip of
 * every batch is the commit the batch before made.
 */
export async function stepAt(
  repo: Repo,
  agent: string,
  oid: string,
  withParent = false,
): Promise<{ n: number; parent?: string }> {
  const known = numbersOf(repo).get(oid)
  if (known !== undefined && (known === 0 || !withParent)) return { n: known }
  const info = await readCommitInfo(repo, oid)
  const s = info ? stepOfSubject(info.message) : undefined
  const n = s && s.agent === agent ? s.n : 0
  numbersOf(repo).set(oid, n)
  return { n, parent: info?.parents[0] }
}

/** The commit of step `n` at or below `tip` on `agent`'s branch, walking first parents. */
export async function findStep(
  repo: Repo,
  agent: string,
  tip: string,
  n: number,
): Promise<string | undefined> {
  for (let oid: string | undefined = tip, hops = 0; oid && hops < 100_000; hops++) {
    const at = await stepAt(repo, agent, oid, true)
    if (at.n === n) return oid
    if (at.n < n) return undefined
    oid = at.parent
  }
  return undefined
}
