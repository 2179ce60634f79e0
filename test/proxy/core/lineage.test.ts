/**
 * The governing/followed fold of core/lineage over a small commit graph given as parent lists:
 * nearest candidate wins, equal ones fold, incomparable ones refuse, diverged tips hold.
 */
import { foldGoverning, followConfig, type Ancestry } from '../../../proxy/core/lineage'

/** isAncestor over a DAG `child → parents`. */
function ancestry(parents: Record<string, string[]>): Ancestry {
  const reach = (a: string, b: string): boolean => a === b || (parents[b] ?? []).some((p) => reach(a, p))
  return async (a, b) => reach(a, b)
}

//   r ── a ── b ── c        (main line)
//         \── x ── y        (a side branch from a)
const dag = ancestry({ a: ['r'], b: ['a'], c: ['b'], x: ['a'], y: ['x'] })

describe('the governing config of a commit', () => {
  it('is the nearest merge base, whatever the order of the refs', async () => {
    const one = await foldGoverning(
      [
        { ref: 'config/old', base: 'a' },
        { ref: 'config/new', base: 'b' },
      ],
      dag,
    )
    const two = await foldGoverning(
      [
        { ref: 'config/new', base: 'b' },
        { ref: 'config/old', base: 'a' },
      ],
      dag,
    )
    expect(one).toEqual({ ok: true, commit: 'b', refs: ['config/new'] })
    expect(two).toEqual(one)
  })

  it('folds equal candidates into one, naming every ref', async () => {
    const g = await foldGoverning(
      [
        { ref: 'config/a', base: 'b' },
        { ref: 'config/b', base: 'b' },
      ],
      dag,
    )
    expect(g).toEqual({ ok: true, commit: 'b', refs: ['config/a', 'config/b'] })
  })

  it('is refused when there is no candidate (no lineage shares history)', async () => {
    const g = await foldGoverning([], dag)
    expect(g).toMatchObject({ ok: false, reason: 'none' })
  })

  it('is refused when two candidates are incomparable, naming both', async () => {
    const g = await foldGoverning(
      [
        { ref: 'config/main', base: 'c' },
        { ref: 'config/side', base: 'y' },
      ],
      dag,
    )
    expect(g).toMatchObject({ ok: false, reason: 'incomparable' })
    if (!g.ok) expect(g.message).toMatch(/config\/main.*config\/side/)
  })
})

describe('the followed config', () => {
  it('is the lineage head itself when the lineage has not advanced', async () => {
    const f = await followConfig('b', [{ ref: 'config/default', oid: 'b' }], dag)
    expect(f).toEqual({ kind: 'tip', commit: 'b', ref: 'config/default', governing: 'b' })
  })

  it('is the new tip when the lineage advanced past the governing commit', async () => {
    const f = await followConfig('a', [{ ref: 'config/default', oid: 'c' }], dag)
    expect(f).toMatchObject({ kind: 'tip', commit: 'c' })
  })

  it('counts two refs on one commit as one tip', async () => {
    const f = await followConfig(
      'a',
      [
        { ref: 'config/x', oid: 'c' },
        { ref: 'config/y', oid: 'c' },
      ],
      dag,
    )
    expect(f).toMatchObject({ kind: 'tip', commit: 'c', ref: 'config/x' })
  })

  it('holds on the governing commit when the lineages containing it diverged, and says so', async () => {
    const f = await followConfig(
      'a',
      [
        { ref: 'config/main', oid: 'c' },
        { ref: 'config/side', oid: 'y' },
      ],
      dag,
    )
    expect(f).toMatchObject({ kind: 'held', commit: 'a', diverged: ['config/main', 'config/side'] })
    if (f.kind === 'held') expect(f.note).toContain('2 diverged lineages')
  })

  it('ignores heads that do not contain the governing commit', async () => {
    const f = await followConfig(
      'x',
      [
        { ref: 'config/main', oid: 'c' },
        { ref: 'config/side', oid: 'y' },
      ],
      dag,
    )
    expect(f).toMatchObject({ kind: 'tip', commit: 'y', ref: 'config/side' })
  })
})
