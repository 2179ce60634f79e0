/**
 * store/git/tree: git's tree, one model. Covers: a body sorts and writes modes as `git mktree`
 * (a directory as if its name ended in "/", names in UTF-8 byte order past the BMP too); a kept
 * tree edited in place entry by entry is byte for byte the tree made at once, each edit says how
 * the old body became the new one (what a delta on it needs), and a copy's edits never reach the
 * tree it was copied from.
 */
import fs from 'node:fs'
import { gitObject } from '../../../../proxy/store/git/objects'
import { compareKeys, GitTree, treeBody, type TreeItem } from '../../../../proxy/store/git/tree'
import { rng } from '../../../support/fuzz'
import { bareRepo, gitBytes } from '../git.support'

let dir: string
let gitdir: string
beforeEach(() => {
  ;({ dir, gitdir } = bareRepo('holdfast-tree-'))
})
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

const blob = gitObject('blob', Buffer.from('x')).oid
const sub = gitObject('tree', Buffer.alloc(0)).oid

/** The tree id `git mktree` makes of `items` (it checks no object exists: `--missing`). */
function mktree(items: readonly TreeItem[]): string {
  const text = items.map((i) => `${i.mode} ${i.type} ${i.oid}\t${i.path}\n`).join('')
  return gitBytes(gitdir, ['mktree', '--missing'], text).toString().trim()
}

describe('treeBody', () => {
  it('sorts entries as git does (a directory as if its name ended in "/") and writes 40000 for a tree', () => {
    // Given in an order git would not keep; "a" the directory sorts after "a.b" ('/' > '.').
    const items: TreeItem[] = [
      { mode: '040000', path: 'a', oid: sub, type: 'tree' },
      { mode: '100644', path: 'a.b', oid: blob, type: 'blob' },
      { mode: '100755', path: 'a-b', oid: blob, type: 'blob' },
      { mode: '120000', path: 'Z', oid: blob, type: 'blob' },
      { mode: '100644', path: 'a0', oid: blob, type: 'blob' },
    ]
    const body = treeBody(items)
    expect(gitObject('tree', body).oid).toBe(mktree(items))
    expect(body.subarray(0, 6).toString()).toBe('120000') // "Z" (0x5a) first, mode kept as given
    expect(body.includes(Buffer.from('40000 a\0'))).toBe(true)
    expect(body.includes(Buffer.from('040000'))).toBe(false)
    expect(treeBody([...items].reverse()).equals(body)).toBe(true)
  })

  it('orders names by their UTF-8 bytes, a name past the BMP after one near its end', () => {
    const items: TreeItem[] = ['\u{1F600}', '\uFFFD', 'é', 'z', '\uE000x'].map((path) => ({
      mode: '100644',
      path,
      oid: blob,
      type: 'blob',
    }))
    expect(gitObject('tree', treeBody(items)).oid).toBe(mktree(items))
    expect(compareKeys('\u{1F600}', '\uFFFD')).toBeGreaterThan(0) // JavaScript's < says otherwise
    expect('\u{1F600}' < '\uFFFD').toBe(true)
  })
})

describe('GitTree', () => {
  const step = (n: number, oid = sub): TreeItem => ({
    mode: '040000',
    path: String(n).padStart(3, '0'),
    oid,
    type: 'tree',
  })

  it('grows entry by entry into the tree made at once, past 999 (1000 sorts before 101)', () => {
    const tree = GitTree.of([])
    const items: TreeItem[] = []
    for (let n = 1; n <= 1010; n++) {
      const before = tree.body()
      const e = tree.set(step(n))
      items.push(step(n))
      // The edit turns the old body into the new one: what a splice delta on it carries.
      const applied = Buffer.concat([
        before.subarray(0, e.prefix),
        e.insert,
        before.subarray(e.prefix + e.skip),
      ])
      expect(applied.equals(tree.body())).toBe(true)
    }
    expect(tree.size).toBe(1010)
    expect(tree.body().equals(treeBody(items))).toBe(true)
    expect(gitObject('tree', tree.body()).oid).toBe(mktree(items))
  })

  it('replaces an entry of the same name and kind in place, and keeps a file and a directory of one name apart', () => {
    const random = rng(3)
    const items = Array.from({ length: 50 }, (_, i) => step(i + 1))
    const tree = GitTree.of(items)
    const other = gitObject('blob', Buffer.from(String(random()))).oid
    const e = tree.set(step(20, other))
    expect(e.skip).toBe(e.insert.length) // one line for one line
    items[19] = step(20, other)
    expect(tree.body().equals(treeBody(items))).toBe(true)
    const file: TreeItem = { mode: '100644', path: '020', oid: blob, type: 'blob' }
    expect(tree.set(file).skip).toBe(0) // "020" the file sorts before "020/" the directory
    expect(tree.body().equals(treeBody([...items, file]))).toBe(true)
  })

  it("never lets a copy's edits reach the tree it was copied from", () => {
    const kept = GitTree.of([step(1), step(2)])
    const body = kept.body()
    const copy = kept.copy()
    copy.set(step(3))
    copy.set(step(1, blob))
    expect(kept.body().equals(body)).toBe(true)
    expect(copy.size).toBe(3)
  })
})
