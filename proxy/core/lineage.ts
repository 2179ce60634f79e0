/**
 * Which config governs a commit, and which one it follows (DESIGN §8, seed 002). Governing: of
 * every `config/*` head's merge base with the commit, the nearest (a fold; unrelated lineages have
 * none and are skipped). Followed: the distinct tips of the `config/*` heads that contain the
 * governing commit — one tip is followed; several (diverged) hold on the governing commit.
 * Pure: ancestry is asked of an oracle, so the rules are tested without a repository.
 */

/** `isAncestor(a, b)`: a is b or an ancestor of b. */
export type Ancestry = (a: string, b: string) => Promise<boolean>

export interface Candidate {
  /** The config ref (`refs/heads/config/<name>`). */
  ref: string
  /** Its merge base with the revision. */
  base: string
}

export type Governing =
  | { ok: true; commit: string; refs: string[] }
  | { ok: false; reason: 'none' | 'incomparable'; message: string }

/** The nearest candidate to the revision; equal candidates fold into one. */
export async function foldGoverning(
  candidates: readonly Candidate[],
  isAncestor: Ancestry,
): Promise<Governing> {
  const first = candidates[0]
  if (!first)
    return { ok: false, reason: 'none', message: 'no config/* lineage shares history with this commit' }
  let best = first.base
  let refs = [first.ref]
  for (const c of candidates.slice(1)) {
    if (c.base === best) refs.push(c.ref)
    else if (await isAncestor(best, c.base)) {
      best = c.base // c is nearer the revision
      refs = [c.ref]
    } else if (!(await isAncestor(c.base, best))) {
      return {
        ok: false,
        reason: 'incomparable',
        message: `two config lineages govern this commit and neither contains the other: ${refs.join(', ')} at ${best.slice(0, 8)} and ${c.ref} at ${c.base.slice(0, 8)}`,
      }
    }
  }
  return { ok: true, commit: best, refs }
}

export interface ConfigHead {
  ref: string
  oid: string
}

export type Followed =
  | { kind: 'tip'; commit: string; ref: string; governing: string }
  | { kind: 'held'; commit: string; governing: string; diverged: string[]; note: string }

/** The config a step resolves against: the one tip that contains the governing commit, else the governing commit. */
export async function followConfig(
  governing: string,
  heads: readonly ConfigHead[],
  isAncestor: Ancestry,
): Promise<Followed> {
  const tips = new Map<string, string[]>()
  for (const h of heads) {
    if (await isAncestor(governing, h.oid)) tips.set(h.oid, [...(tips.get(h.oid) ?? []), h.ref])
  }
  if (tips.size === 1) {
    const [[commit, refs]] = [...tips] as [[string, string[]]]
    return { kind: 'tip', commit, ref: refs[0] as string, governing }
  }
  const diverged = [...tips.values()].map((r) => r[0] as string)
  return {
    kind: 'held',
    commit: governing,
    governing,
    diverged,
    note: `held at ${governing.slice(0, 8)}: ${tips.size} diverged lineages (${diverged.join(', ')})`,
  }
}
