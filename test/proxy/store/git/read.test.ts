/**
 * store/git/read: reading files, directories, commits and revisions. Covers (beyond
 * test/proxy/store/git.test.ts): tree paths refused before any read, directories listed by name
 * (not git's tree order), annotated tags peeled to their commit, a branch name winning over an
 * oid prefix, an ambiguous prefix refused, and the pack-cache retry: a failed read is tried
 * again (the last time with a fresh cache), a missing object is an answer and is not.
 */
import fs from 'node:fs'
import { commitFiles } from '../../../../proxy/store/git'
import { gitObject } from '../../../../proxy/store/git/objects'
import { writePack } from '../../../../proxy/store/git/pack'
import { Lru, type Repo } from '../../../../proxy/store/git/repo'
import { casRef } from '../../../../proxy/store/git/refs'
import {
  listDir,
  readCommitInfo,
  readFileAt,
  resolveRevision,
  splitPath,
} from '../../../../proxy/store/git/read'
import { git, configRepo } from '../git.support'

let dir: string
let gitdir: string
let repo: Repo
let root: string

beforeEach(async () => {
  ;({ dir, gitdir, repo, root } = await configRepo('holdfast-read-'))
})
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

/** A handle on the same repository with nothing cached (reads go to the disk). */
const uncached = (): Repo => ({ ...repo, cache: {}, trees: new Lru(8), commitTrees: new Lru(8) })

describe('splitPath', () => {
  it('splits on "/" and refuses empty, ".", "..", any-case ".git" and NUL segments', () => {
    expect(splitPath('steps/main/001/request.json')).toEqual(['steps', 'main', '001', 'request.json'])
    expect(splitPath('.gitignore')).toEqual(['.gitignore'])
    for (const bad of ['', '/a', 'a/', 'a//b', '.', 'a/./b', '../a', 'a/.GIT/x', '.Git', 'a\0b']) {
      expect(() => splitPath(bad)).toThrow(/is not usable/)
    }
  })
})

describe('listDir and readFileAt', () => {
  it('lists a directory sorted by plain name, where git orders a directory as if it ended in "/"', async () => {
    const c = await commitFiles(repo, {
      parent: root,
      files: { 'd/a/x': '1', 'd/a.b': '2', 'd/a-b': '3' },
      message: 'names',
    })
    expect(git(gitdir, 'ls-tree', '--name-only', `${c}:d`).trim().split('\n')).toEqual(['a-b', 'a.b', 'a'])
    const listed = await listDir(uncached(), c, 'd')
    expect(listed?.map((e) => `${e.type} ${e.name}`)).toEqual(['tree a', 'blob a-b', 'blob a.b'])
    expect(listed?.[0]?.oid).toBe(git(gitdir, 'rev-parse', `${c}:d/a`).trim())
    expect((await readFileAt(uncached(), c, 'd/a/x'))?.toString()).toBe('1')
    await expect(readFileAt(repo, c, 'd/../providers.yaml')).rejects.toThrow(/is not usable/)
  })
})

describe('commits and revisions', () => {
  it('peels an annotated tag to its commit, with the author and message git stored', async () => {
    const author = { name: 'Ada', email: 'ada@example.com', timestamp: 1_700_000_123 }
    const c = await commitFiles(repo, { parent: root, files: { f: 'x' }, message: 'subject\n\nbody', author })
    git(gitdir, 'tag', '-a', 'v1', '-m', 'a tag', c)
    const tag = git(gitdir, 'rev-parse', 'refs/tags/v1').trim()
    expect(tag).not.toBe(c)
    const info = await readCommitInfo(repo, tag)
    expect(info).toEqual({
      oid: c,
      tree: git(gitdir, 'rev-parse', `${c}^{tree}`).trim(),
      parents: [root],
      message: 'subject\n\nbody\n',
      author,
    })
    expect(await resolveRevision(repo, 'refs/tags/v1')).toBe(c)
    const tree = git(gitdir, 'rev-parse', `${c}^{tree}`).trim()
    await expect(resolveRevision(repo, tree)).rejects.toThrow(/does not name a commit/)
  })

  it('lets a branch named like an oid prefix win over the commit that prefix would name', async () => {
    const c = await commitFiles(repo, { parent: root, files: { f: 'y' }, message: 'c' })
    const prefix = c.slice(0, 8)
    expect(await resolveRevision(repo, prefix)).toBe(c)
    await casRef(repo, `refs/heads/${prefix}`, root, null)
    expect(await resolveRevision(repo, prefix)).toBe(root)
  })

  it('refuses a prefix two objects share, as git does', async () => {
    // Two blobs whose ids share their first 4 hex digits (found by hashing, no git needed).
    const seen = new Map<string, ReturnType<typeof gitObject>>()
    let pair: ReturnType<typeof gitObject>[] = []
    for (let i = 0; pair.length === 0; i++) {
      const o = gitObject('blob', Buffer.from(`blob ${i}`))
      const hit = seen.get(o.oid.slice(0, 4))
      if (hit) pair = [hit, o]
      else seen.set(o.oid.slice(0, 4), o)
    }
    writePack(gitdir, pair)
    const prefix = (pair[0] as { oid: string }).oid.slice(0, 4)
    expect(() => git(gitdir, 'rev-parse', '--verify', '--quiet', prefix)).toThrow()
    await expect(resolveRevision(repo, prefix)).rejects.toThrow()
    await expect(resolveRevision(repo, prefix)).rejects.toMatchObject({ code: 'AmbiguousError' })
    // One more hex digit tells them apart.
    const longer = (pair[1] as { oid: string }).oid.slice(0, 12)
    await expect(resolveRevision(repo, longer)).rejects.toThrow(/does not name a commit/)
  })
})

describe('the pack-cache retry', () => {
  it('retries a read that failed on its pack cache, the last time with a fresh cache, and then succeeds', async () => {
    const r = uncached()
    let thrown = 0
    // A pack cache that fails as one does when a concurrent `git gc` removed a pack it listed.
    const stale = new Proxy(
      {},
      {
        get: () => {
          thrown++
          throw Object.assign(new Error('ENOENT: pack vanished'), { code: 'ENOENT' })
        },
      },
    )
    r.cache = stale
    const info = await readCommitInfo(r, root)
    expect(info.oid).toBe(root)
    expect(thrown).toBe(3) // the stale cache kept for two more tries (only unreadable indexes dropped), then replaced
    expect(r.cache).not.toBe(stale)
  })

  it('does not retry (nor drop the cache) when the object is simply missing', async () => {
    const r = uncached()
    const cache = r.cache
    await expect(readCommitInfo(r, '0'.repeat(40))).rejects.toMatchObject({ code: 'NotFoundError' })
    expect(r.cache).toBe(cache)
  })
})
