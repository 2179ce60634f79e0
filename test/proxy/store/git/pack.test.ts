/**
 * store/git/pack: objects written as one packfile + v2 index per batch. Covers: a pack (small stored objects, deflated large ones,
 * every size boundary of the entry header, duplicates) is read by `git cat-file`, verified by
 * `git verify-pack` and fsck-clean, read-only, with nothing left behind and nothing for an empty batch;
 * trees are stored, and an object that edits an earlier one in the pack is written as a delta;
 * an object given in pieces has the id and bytes of its joined body.
 */
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import {
  commitBody,
  type GitObject,
  gitObject,
  PiecedObject,
  splicePieces,
} from '../../../../proxy/store/git/objects'
import { treeBody, type TreeItem } from '../../../../proxy/store/git/tree'
import { writePack } from '../../../../proxy/store/git/pack'
import { getTree } from '../../../../proxy/store/git/read'
import { Lru, openRepo, type TreeEntry } from '../../../../proxy/store/git/repo'
import { bareRepo, git, gitBytes, packFiles, tempLeftovers } from '../git.support'

let dir: string
let gitdir: string
beforeEach(() => {
  ;({ dir, gitdir } = bareRepo('holdfast-pack-'))
})
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

describe('writePack', () => {
  it('writes a pack git reads object by object and verifies, with every header size boundary', () => {
    // Sizes around each boundary of the entry header (4 bits, then 7 more per byte) and of the
    // stored/deflated choice (512), one past the stored-block limit, and one incompressible.
    const sizes = [0, 1, 15, 16, 511, 512, 2047, 2048, 65_535, 65_536, 262_143, 262_144]
    const blobs = sizes.map((n, i) => gitObject('blob', Buffer.alloc(n, 97 + (i % 26))))
    blobs.push(gitObject('blob', randomBytes(70_000)))
    const items: TreeItem[] = blobs.map((b, i) => ({
      mode: '100644',
      path: `f${i}`,
      oid: b.oid,
      type: 'blob',
    }))
    const tree = gitObject('tree', treeBody(items))
    const who = { name: 'holdfast', email: 'holdfast@localhost', timestamp: 1_700_000_000 }
    const commit = gitObject('commit', commitBody(tree.oid, [], who, 'pack test'))
    const name = writePack(gitdir, [...blobs, tree, commit])
    expect(name).toMatch(/^pack-[0-9a-f]{40}$/)
    expect(packFiles(gitdir)).toEqual([`${name}.pack`])

    const input = blobs.map((b) => `${b.oid}\n`).join('')
    const out = gitBytes(gitdir, ['cat-file', '--batch'], input)
    let at = 0
    for (const b of blobs) {
      const nl = out.indexOf(0x0a, at)
      expect(out.subarray(at, nl).toString()).toBe(`${b.oid} blob ${b.body.length}`)
      expect(out.subarray(nl + 1, nl + 1 + b.body.length).equals(b.body)).toBe(true)
      at = nl + 1 + b.body.length + 1
    }
    expect(git(gitdir, 'cat-file', '-p', commit.oid)).toContain('pack test')
    const packPath = path.join(gitdir, 'objects', 'pack', `${name}.pack`)
    expect(git(gitdir, 'verify-pack', packPath.replace(/\.pack$/, '.idx'))).toBe('')
    git(gitdir, 'update-ref', 'refs/heads/main', commit.oid)
    expect(git(gitdir, 'fsck', '--strict', '--no-dangling')).toBe('')
  })

  it('stores a tree uncompressed (its ids do not compress), and git reads and verifies it', () => {
    // 3 000 entries of random ids (≈ 100 KB, past one stored block), and 20 (past 512 bytes).
    const big: TreeItem[] = Array.from({ length: 3000 }, (_, i) => ({
      mode: '040000',
      path: String(i).padStart(4, '0'),
      oid: randomBytes(20).toString('hex'),
      type: 'tree',
    }))
    const trees = [gitObject('tree', treeBody(big)), gitObject('tree', treeBody(big.slice(0, 20)))]
    expect(trees[0]?.body.length).toBeGreaterThan(65_535)
    expect(trees[1]?.body.length).toBeGreaterThan(512)
    const name = writePack(gitdir, trees) as string
    const pack = fs.readFileSync(path.join(gitdir, 'objects', 'pack', `${name}.pack`))
    // Stored, not deflated: the 20-entry tree's names ("0000" … "0019") would compress.
    expect(pack.includes(trees[1]?.body as Buffer)).toBe(true)
    expect(pack.length).toBeGreaterThan((trees[0]?.body.length ?? 0) + (trees[1]?.body.length ?? 0))
    const idx = path.join(gitdir, 'objects', 'pack', `${name}.idx`)
    expect(git(gitdir, 'verify-pack', idx)).toBe('')
    for (const t of trees) expect(gitBytes(gitdir, ['cat-file', 'tree', t.oid]).equals(t.body)).toBe(true)
  })

  it('writes an object that edits an earlier one in the pack as a delta git resolves to its exact bytes', async () => {
    // A base past 64 KB (copy offsets and sizes over two bytes), then edits chained on it: an entry
    // added at the end, one in the middle, one replaced; and an edit of an object not in the pack,
    // which is written whole.
    const entries: TreeItem[] = Array.from({ length: 3000 }, (_, i) => ({
      mode: '040000',
      path: String(i * 2).padStart(5, '0'),
      oid: randomBytes(20).toString('hex'),
      type: 'tree',
    }))
    const lineOf = (e: TreeItem): Buffer => treeBody([e])
    const edited = (base: GitObject, items: TreeItem[], changed: TreeItem, replaced: boolean): GitObject => {
      const sorted = [...items].sort((a, b) => (a.path < b.path ? -1 : 1))
      const at = sorted.findIndex((e) => e.path === changed.path)
      const prefix = treeBody(sorted.slice(0, at)).length
      const o = gitObject('tree', treeBody(sorted))
      const skip = replaced ? lineOf(changed).length : 0
      o.edit = { base, prefix, skip, insert: lineOf(changed) }
      return o
    }
    const base = gitObject('tree', treeBody(entries))
    const end = { mode: '040000', path: '99999', oid: randomBytes(20).toString('hex'), type: 'tree' }
    const v1 = edited(base, [...entries, end], end, false)
    const middle = { mode: '040000', path: '03001', oid: randomBytes(20).toString('hex'), type: 'tree' }
    const v2 = edited(v1, [...entries, end, middle], middle, false)
    const swap = { ...(entries[10] as TreeItem), oid: randomBytes(20).toString('hex') }
    const v3 = edited(v2, [...entries.filter((_, i) => i !== 10), end, middle, swap], swap, true)
    const elsewhere = gitObject('tree', treeBody([end]))
    const outside = edited(elsewhere, [end, middle], middle, false)
    const name = writePack(gitdir, [base, v1, v2, v3, outside]) as string
    const idx = path.join(gitdir, 'objects', 'pack', `${name}.idx`)

    const verbose = git(gitdir, 'verify-pack', '-v', idx)
    for (const o of [v1, v2, v3])
      expect(verbose).toMatch(new RegExp(`^${o.oid} tree .* ${o.edit?.base.oid}$`, 'm'))
    expect(verbose).toMatch(new RegExp(`^${outside.oid} tree +\\d+ \\d+ \\d+$`, 'm'))
    const pack = fs.statSync(path.join(gitdir, 'objects', 'pack', `${name}.pack`)).size
    expect(pack).toBeLessThan(base.body.length + 2000) // three more trees of ~93 KB each: a few bytes each
    for (const o of [base, v1, v2, v3, outside])
      expect(gitBytes(gitdir, ['cat-file', 'tree', o.oid]).equals(o.body)).toBe(true)
    // holdfast's own reader (isomorphic-git) resolves them too, from the pack.
    const repo = { ...openRepo(gitdir), cache: {}, trees: new Lru<readonly TreeEntry[]>(8) }
    expect((await getTree(repo, v3.oid)).map((e) => e.path)).toEqual(
      [...entries.filter((_, i) => i !== 10), end, middle, swap].map((e) => e.path).sort(),
    )
  })

  it('gives an object in pieces the id and bytes of its joined body, and git reads it written whole or as a delta', () => {
    const entries = Array.from({ length: 4000 }, (_, i) =>
      treeBody([
        {
          mode: '040000',
          path: String(i + 1).padStart(4, '0'),
          oid: randomBytes(20).toString('hex'),
          type: 'tree',
        },
      ]),
    )
    const base = gitObject('tree', Buffer.concat(entries))
    const added = treeBody([
      { mode: '040000', path: '9999', oid: randomBytes(20).toString('hex'), type: 'tree' },
    ])
    const pieces = splicePieces([base.body], base.body.length, 0, added)
    const pieced = new PiecedObject('tree', pieces)
    const joined = gitObject('tree', Buffer.concat([base.body, added]))
    expect(pieced.oid).toBe(joined.oid)
    pieced.edit = { base, prefix: base.body.length, skip: 0, insert: added }
    // As a delta on its base, and (another object, no base in the pack) whole.
    const alone = new PiecedObject('tree', splicePieces([added], 0, 0, added))
    const name = writePack(gitdir, [base, pieced, alone]) as string
    git(gitdir, 'verify-pack', path.join(gitdir, 'objects', 'pack', `${name}.idx`))
    expect(gitBytes(gitdir, ['cat-file', 'tree', pieced.oid]).equals(joined.body)).toBe(true)
    expect(gitBytes(gitdir, ['cat-file', 'tree', alone.oid]).equals(Buffer.concat([added, added]))).toBe(true)
  })

  it('stores each object once however often it is given, and names the pack by its contents', () => {
    const a = gitObject('blob', Buffer.from('same'))
    const b = gitObject('blob', Buffer.from('other'))
    const name = writePack(gitdir, [a, b, a, a]) as string
    const pack = fs.readFileSync(path.join(gitdir, 'objects', 'pack', `${name}.pack`))
    expect(pack.subarray(0, 4).toString()).toBe('PACK')
    expect(pack.readUInt32BE(4)).toBe(2)
    expect(pack.readUInt32BE(8)).toBe(2) // two objects, not four
    expect(name).toBe(`pack-${pack.subarray(pack.length - 20).toString('hex')}`)
    const verbose = git(gitdir, 'verify-pack', '-v', path.join(gitdir, 'objects', 'pack', `${name}.idx`))
    expect(verbose).toContain(`${a.oid} blob`)
    expect(verbose).toContain(`${b.oid} blob`)
    expect(verbose).toMatch(/^non delta: 2 objects$/m)
    // The same objects in the same order make the same pack: replaced in place, still one pack.
    expect(writePack(gitdir, [a, b, b])).toBe(name)
    expect(packFiles(gitdir)).toEqual([`${name}.pack`])
  })

  it('leaves the pack and its index read-only with no temp file, and writes nothing for no objects', () => {
    expect(writePack(gitdir, [])).toBeUndefined()
    expect(packFiles(gitdir)).toEqual([])
    const name = writePack(gitdir, [gitObject('blob', Buffer.from('x'))]) as string
    for (const ext of ['pack', 'idx']) {
      const st = fs.statSync(path.join(gitdir, 'objects', 'pack', `${name}.${ext}`))
      expect(st.mode & 0o777).toBe(0o444)
    }
    expect(tempLeftovers(path.join(gitdir, 'objects'))).toEqual([])
  })

  it('creates objects/pack when a repository has none yet', () => {
    const bare = path.join(dir, 'fresh.git')
    const blob = gitObject('blob', Buffer.from('first'))
    expect(writePack(bare, [blob])).toBeDefined()
    fs.mkdirSync(path.join(bare, 'refs'), { recursive: true })
    fs.writeFileSync(path.join(bare, 'HEAD'), 'ref: refs/heads/main\n')
    expect(git(bare, 'cat-file', 'blob', blob.oid)).toBe('first')
  })
})
