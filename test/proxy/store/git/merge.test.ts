/**
 * store/git/merge: maintenance merges small packs by copying their entries. Covers the geometric
 * choice, every object kept once (a delta whose base another pack also held pointed at the kept
 * copy), packs git itself wrote (its own deltas) merged with holdfast's, packs git must keep left
 * alone, and the handle's pack cache dropped.
 */
import fs from 'node:fs'
import path from 'node:path'
import { commitFiles } from '../../../../proxy/store/git'
import { maintain, MERGED_MAX, packsToMerge } from '../../../../proxy/store/git/merge'
import { gitObject } from '../../../../proxy/store/git/objects'
import { writePack } from '../../../../proxy/store/git/pack'
import { openRepo } from '../../../../proxy/store/git/repo'
import { configRepo, git, packFiles } from '../git.support'

let dir: string
let gitdir: string
let root: string
beforeEach(async () => {
  ;({ dir, gitdir, root } = await configRepo('holdfast-merge-'))
})
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

const objects = (): string => git(gitdir, 'cat-file', '--batch-all-objects', '--batch-check')

/** Eight commits, each its own small pack, on agents/a. */
async function eightCommits(): Promise<string> {
  const repo = openRepo(gitdir)
  let tip = root
  for (let i = 0; i < 8; i++) {
    tip = await commitFiles(repo, {
      parent: tip,
      files: { [`steps/a/00${i + 1}/request.json`]: `{"n":${i}}` },
      message: `step ${i}`,
    })
  }
  git(gitdir, 'update-ref', 'refs/heads/agents/a', tip)
  return tip
}

describe('packsToMerge', () => {
  it('takes what git --geometric=2 rolls up (the first pair from the top out of progression and all below, then larger ones under twice the total), within MERGED_MAX, and none when fewer than two', () => {
    const sizes = (xs: number[]) => packsToMerge(xs.map((size) => ({ size }))).map((p) => p.size)
    expect(sizes([1, 1, 1, 1])).toEqual([1, 1, 1, 1])
    expect(sizes([1, 1, 5, 100])).toEqual([1, 1])
    expect(sizes([1, 1, 3, 100])).toEqual([1, 1, 3])
    expect(sizes([1, 100])).toEqual([])
    expect(sizes([7])).toEqual([])
    expect(sizes([1, 5, 5, 5])).toEqual([1, 5, 5, 5]) // a tiny pack below does not stop the roll-up
    expect(sizes([1, 3, 7, 15])).toEqual([]) // a progression already
    expect(sizes([])).toEqual([])
    const half = MERGED_MAX / 2
    expect(sizes([half, half, half])).toEqual([half, half])
  })
})

describe('maintain', () => {
  it('merges the small packs of many commits into one, keeping every object, fsck-clean', async () => {
    await eightCommits()
    const repo = openRepo(gitdir)
    const before = { packs: packFiles(gitdir).length, objects: objects() }
    expect(before.packs).toBe(9)
    const cache = repo.cache
    const done = await maintain(gitdir)
    expect(done.merged).toBe(9)
    expect(packFiles(gitdir)).toEqual([`${done.name}.pack`])
    expect(objects()).toBe(before.objects)
    expect(repo.cache).not.toBe(cache)
    expect(git(gitdir, 'show', 'agents/a:steps/a/008/request.json')).toBe('{"n":7}')
    expect(git(gitdir, 'fsck', '--strict', '--no-dangling')).toBe('')
    expect((await maintain(gitdir)).merged).toBe(0) // one pack: nothing to merge
  })

  it('keeps an object two packs hold once, pointing a delta on the dropped copy at the kept one', async () => {
    const base = gitObject('blob', Buffer.from('a line of a long file\n'.repeat(200)))
    const next = gitObject('blob', Buffer.concat([base.body, Buffer.from('one more line\n')]))
    next.similar = base
    const other = gitObject('blob', Buffer.from('something else entirely, long enough to deflate'.repeat(20)))
    writePack(gitdir, [base, other]) // the kept copy of `base` (smaller pack first: merged first)
    writePack(gitdir, [base, next, gitObject('blob', Buffer.from('x'.repeat(3000)))]) // `next` a delta on its own copy
    const before = objects()
    expect((before.match(/\n/g) ?? []).length).toBe(4 + 3) // the root's three objects + four blobs
    expect(await maintain(gitdir)).toMatchObject({ merged: 3 })
    expect(objects()).toBe(before)
    const [pack] = packFiles(gitdir)
    const verify = git(gitdir, 'verify-pack', '-v', path.join(gitdir, 'objects', 'pack', pack as string))
    expect(verify.match(new RegExp(`^${next.oid} blob .* 1 ${base.oid}$`, 'm'))).not.toBeNull()
    expect(verify).toMatch(/^non delta: 6 objects$/m)
    expect(git(gitdir, 'cat-file', 'blob', next.oid)).toBe(next.body.toString())
    expect(git(gitdir, 'fsck', '--strict', '--no-dangling')).toBe('')
  })

  it("merges a pack git wrote (git's own deltas) with holdfast's, and leaves a kept pack alone", async () => {
    await eightCommits()
    git(gitdir, 'repack', '-adq', '--depth=10', '--window=10')
    const gitsPack = packFiles(gitdir)
    expect(gitsPack).toHaveLength(1)
    // Small packs after it, together more than half its size: it is merged with them.
    let tip = git(gitdir, 'rev-parse', 'agents/a').trim()
    for (let n = 9; n <= 20; n++)
      tip = await commitFiles(openRepo(gitdir), {
        parent: tip,
        files: { [`steps/a/0${n}/request.json`]: `{"n":${n - 1}}` },
        message: `step ${n}`,
      })
    git(gitdir, 'update-ref', 'refs/heads/agents/a', tip)
    const kept = gitObject('blob', Buffer.from('keep me'))
    const keptPack = writePack(gitdir, [kept]) as string
    fs.writeFileSync(path.join(gitdir, 'objects', 'pack', `${keptPack}.keep`), '')
    const before = objects()
    const done = await maintain(gitdir)
    expect(done.merged).toBe(13)
    expect(packFiles(gitdir).sort()).toEqual([`${done.name}.pack`, `${keptPack}.pack`].sort())
    expect(objects()).toBe(before)
    expect(git(gitdir, 'show', 'agents/a:steps/a/020/request.json')).toBe('{"n":19}')
    expect(git(gitdir, 'show', 'agents/a:steps/a/001/request.json')).toBe('{"n":0}')
    expect(git(gitdir, 'fsck', '--strict', '--no-dangling')).toBe('')
  })

  it('merges nothing and writes nothing where there is no pack', async () => {
    const notRepo = path.join(dir, 'not-a-repo')
    fs.mkdirSync(notRepo)
    expect(await maintain(notRepo)).toEqual({ merged: 0, before: 0, after: 0 })
    expect(fs.readdirSync(notRepo)).toEqual([])
  })
})
