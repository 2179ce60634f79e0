/**
 * store/git/refs: refs read and moved as git does it. Covers (beyond test/proxy/store/git.test.ts):
 * `packed-refs` parsing (comments, peeled lines, junk), HEAD symbolic and detached, a loose ref that
 * is not an oid, prefix listing (partial names, locks and junk skipped, bad prefixes refused), a
 * compare-and-swap on a ref that lives only in `packed-refs`, one that waits out a released lock,
 * git itself refusing a stale old value our swap left, and clearStaleLocks refusing a bad prefix.
 */
import fs from 'node:fs'
import path from 'node:path'
import { commitFiles } from '../../../../proxy/store/git'
import type { Repo } from '../../../../proxy/store/git/repo'
import {
  assertRefName,
  casRef,
  clearStaleLocks,
  deleteRef,
  listRefs,
  parsePackedRefs,
  readHeadTarget,
  readRef,
  RefConflict,
} from '../../../../proxy/store/git/refs'
import { git, configRepo } from '../git.support'

let dir: string
let gitdir: string
let repo: Repo
let root: string
let other: string

beforeEach(async () => {
  ;({ dir, gitdir, repo, root } = await configRepo('holdfast-refs-'))
  other = await commitFiles(repo, { parent: root, files: { f: 'x' }, message: 'other' })
})
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

describe('parsePackedRefs', () => {
  it('reads "<oid> <ref>" lines and skips the header, peeled lines and anything malformed', () => {
    const a = 'a'.repeat(40)
    const b = 'b'.repeat(40)
    const text = [
      '# pack-refs with: peeled fully-peeled sorted ',
      `${a} refs/heads/x`,
      `${b} refs/tags/v1`,
      `^${a}`,
      `${'c'.repeat(39)} refs/heads/short`,
      `${'G'.repeat(40)} refs/heads/nothex`,
      `${b} refs/heads/crlf\r`,
      '',
    ].join('\n')
    expect([...parsePackedRefs(text)]).toEqual([
      ['refs/heads/x', a],
      ['refs/tags/v1', b],
      ['refs/heads/crlf', b],
    ])
    expect(parsePackedRefs(undefined).size).toBe(0)
  })
})

describe('readRef and readHeadTarget', () => {
  it('follows a symbolic HEAD once, and reads a detached HEAD as the oid it holds', async () => {
    expect(await readHeadTarget(repo)).toBe('refs/heads/config/default')
    expect(await readRef(repo, 'HEAD')).toBe(root)
    git(gitdir, 'update-ref', '--no-deref', 'HEAD', other)
    expect(await readHeadTarget(repo)).toBeUndefined()
    expect(await readRef(repo, 'HEAD')).toBe(other)
    expect(await readRef(repo, 'HEAD')).toBe(git(gitdir, 'rev-parse', 'HEAD').trim())
  })

  it('refuses a loose ref that holds no object id, and a name outside refs/', async () => {
    git(gitdir, 'symbolic-ref', 'refs/heads/sym', 'refs/heads/config/default')
    await expect(readRef(repo, 'refs/heads/sym')).rejects.toThrow(/does not hold an object id/)
    await expect(readRef(repo, 'config/default')).rejects.toThrow(/not a usable ref name/)
    await expect(readRef(repo, 'refs/heads/../../config')).rejects.toThrow(/not a usable ref name/)
    expect(() => assertRefName('refs/heads/a/b.c')).not.toThrow()
    expect(() => assertRefName('refs/heads/a@{1}')).toThrow()
    // A directory where a ref would be is no ref.
    expect(await readRef(repo, 'refs/heads/config')).toBeUndefined()
  })
})

describe('listRefs', () => {
  it('matches partial names, skips lock files and junk, and agrees with git for-each-ref', async () => {
    for (const name of ['a1', 'a2', 'b1']) await casRef(repo, `refs/heads/agents/${name}`, other, null)
    fs.writeFileSync(path.join(gitdir, 'refs/heads/agents/a3.lock'), `${root}\n`)
    fs.writeFileSync(path.join(gitdir, 'refs/heads/agents/a4'), 'garbage\n')
    expect((await listRefs(repo, 'refs/heads/agents/a')).map((r) => r.ref)).toEqual([
      'refs/heads/agents/a1',
      'refs/heads/agents/a2',
    ])
    fs.rmSync(path.join(gitdir, 'refs/heads/agents/a4'))
    const ours = (await listRefs(repo, 'refs/')).map((r) => `${r.oid} ${r.ref}`)
    const theirs = git(gitdir, 'for-each-ref', '--format=%(objectname) %(refname)').trim().split('\n')
    expect(ours).toEqual(theirs)
  })

  it('refuses a prefix outside refs/ or with a ".." segment', async () => {
    await expect(listRefs(repo, 'heads/')).rejects.toThrow(/not a ref prefix/)
    await expect(listRefs(repo, 'refs/../../')).rejects.toThrow(/not a ref prefix/)
  })
})

describe('casRef', () => {
  it('moves a ref that lives only in packed-refs, checking its packed value, as git sees it', async () => {
    const ref = 'refs/heads/agents/p'
    await casRef(repo, ref, root, null)
    git(gitdir, 'pack-refs', '--all')
    expect(fs.existsSync(path.join(gitdir, ref))).toBe(false)
    await expect(casRef(repo, ref, other, null)).rejects.toMatchObject({ expected: null, actual: root })
    await casRef(repo, ref, other, root)
    expect(git(gitdir, 'rev-parse', ref).trim()).toBe(other)
    // A stale old value is refused by git too: our swap left nothing behind for it to trip on.
    expect(() => git(gitdir, 'update-ref', ref, root, root)).toThrow(/cannot lock ref|is at/)
    git(gitdir, 'update-ref', ref, root, other)
    expect(await readRef(repo, ref)).toBe(root)
  })

  it('makes the folders of a new ref, and makes them again after git pack-refs pruned them', async () => {
    const ref = 'refs/heads/agents/deep/er'
    await casRef(repo, ref, root, null)
    git(gitdir, 'pack-refs', '--all')
    expect(fs.existsSync(path.join(gitdir, 'refs/heads/agents/deep'))).toBe(false)
    await casRef(repo, ref, other, root)
    expect(git(gitdir, 'rev-parse', ref).trim()).toBe(other)
    expect(fs.existsSync(path.join(gitdir, `${ref}.lock`))).toBe(false)
  })

  it('waits for a lock that is released within its retries, then swaps', async () => {
    const ref = 'refs/heads/agents/w'
    await casRef(repo, ref, root, null)
    const lock = path.join(gitdir, `${ref}.lock`)
    fs.writeFileSync(lock, '')
    const release = setTimeout(() => fs.rmSync(lock), 15)
    try {
      await casRef(repo, ref, other, root, { retries: 8, backoffMs: 4 })
    } finally {
      clearTimeout(release)
    }
    expect(git(gitdir, 'rev-parse', ref).trim()).toBe(other)
    expect(fs.existsSync(lock)).toBe(false)
  })

  it('refuses an expected value that is not a full oid before taking the lock', async () => {
    const ref = 'refs/heads/agents/e'
    await expect(casRef(repo, ref, other, root.slice(0, 12))).rejects.toThrow(
      /expected value .* is not a full object id/,
    )
    expect(fs.existsSync(path.join(gitdir, `${ref}.lock`))).toBe(false)
    expect(await readRef(repo, ref)).toBeUndefined()
    // RefConflict says what was expected and what was found, absent included.
    expect(new RefConflict(ref, null, root).message).toBe(
      `ref ${ref} moved: expected (absent), found ${root}`,
    )
  })
})

describe('clearStaleLocks', () => {
  it('removes locks in nested folders of the prefix, and refuses a prefix that could escape', async () => {
    fs.mkdirSync(path.join(gitdir, 'refs/heads/agents/team'), { recursive: true })
    fs.writeFileSync(path.join(gitdir, 'refs/heads/agents/team/x.lock'), '')
    fs.writeFileSync(path.join(gitdir, 'refs/heads/agents/team/y'), `${root}\n`)
    expect(await clearStaleLocks(gitdir, 'agents/')).toEqual([
      path.join(gitdir, 'refs/heads/agents/team/x.lock'),
    ])
    expect(fs.existsSync(path.join(gitdir, 'refs/heads/agents/team/y'))).toBe(true)
    expect(await clearStaleLocks(gitdir, 'nothing-here')).toEqual([])
    await expect(clearStaleLocks(gitdir, '../..')).rejects.toThrow(/not a usable ref prefix/)
  })
})

describe('deleteRef', () => {
  it('deletes a loose ref holding the expected value, and refuses one that moved', async () => {
    await casRef(repo, 'refs/heads/agents/d', root, null)
    await expect(deleteRef(repo, 'refs/heads/agents/d', other)).rejects.toBeInstanceOf(RefConflict)
    await deleteRef(repo, 'refs/heads/agents/d', root)
    expect(await readRef(repo, 'refs/heads/agents/d')).toBeUndefined()
  })

  it("removes a packed ref's line, leaving the others", async () => {
    await casRef(repo, 'refs/heads/agents/p', other, null)
    await casRef(repo, 'refs/heads/agents/q', root, null)
    git(gitdir, 'pack-refs', '--all')
    await deleteRef(repo, 'refs/heads/agents/p', other)
    expect(await readRef(repo, 'refs/heads/agents/p')).toBeUndefined()
    expect(await readRef(repo, 'refs/heads/agents/q')).toBe(root)
    expect(git(gitdir, 'for-each-ref', '--format=%(refname)', 'refs/heads/agents/').trim()).toBe(
      'refs/heads/agents/q',
    )
  })
})
