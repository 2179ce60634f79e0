/**
 * store/git/repo: the handle on one bare repository. Covers: the LRU forgets the least recently
 * used key (a read refreshes), a handle is cached per resolved path and opening touches no disk,
 * resetPackCache replaces only that handle's cache, the pack files read whole are let go past the
 * handle's bound (all but the one just read) and all of them at idle (dropAllPackBytes), writeRepoFile puts a file whole (temp + rename,
 * nothing left on failure), and isomorphic-git writing through the handle's fs makes loose objects
 * git reads, in fan-out directories that already exist, with no temp file left.
 */
import fs from 'node:fs'
import path from 'node:path'
import * as isogit from 'isomorphic-git'
import { initRepo } from '../../../../proxy/store/git'
import {
  dropAllPackBytes,
  dropPackBytes,
  Lru,
  openRepo,
  resetPackCache,
  writeRepoFile,
} from '../../../../proxy/store/git/repo'
import { git, gitBytes, tempDir, tempLeftovers } from '../git.support'

let dir: string
beforeEach(() => {
  dir = tempDir('holdfast-repo-')
})
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

describe('Lru', () => {
  it('forgets the least recently used key once over its bound, a get counting as a use', () => {
    const lru = new Lru<number>(2)
    lru.set('a', 1)
    lru.set('b', 2)
    expect(lru.get('a')).toBe(1) // now b is the oldest
    lru.set('c', 3)
    expect(lru.get('b')).toBeUndefined()
    expect(lru.get('a')).toBe(1)
    expect(lru.get('c')).toBe(3)
    lru.set('a', 10) // a set refreshes too, and replaces
    lru.set('d', 4)
    expect(lru.get('c')).toBeUndefined()
    expect(lru.get('a')).toBe(10)
  })
})

describe('openRepo and resetPackCache', () => {
  it('returns one handle per resolved path, with an absolute gitdir, without touching the disk', () => {
    const gitdir = path.join(dir, 'ws', 'repo.git')
    const a = openRepo(gitdir)
    const b = openRepo(path.join(dir, 'ws', '..', 'ws', 'repo.git') + '/')
    expect(b).toBe(a)
    expect(a.gitdir).toBe(gitdir)
    const rel = path.relative(process.cwd(), gitdir)
    expect(openRepo(rel)).toBe(a)
    expect(fs.existsSync(path.join(dir, 'ws'))).toBe(false)
    expect(openRepo(path.join(dir, 'other.git'))).not.toBe(a)
  })

  it('replaces the pack cache of that handle only, and ignores a path never opened', () => {
    const a = openRepo(path.join(dir, 'a.git'))
    const b = openRepo(path.join(dir, 'b.git'))
    const [cacheA, cacheB] = [a.cache, b.cache]
    resetPackCache(path.join(dir, 'a.git'))
    expect(a.cache).not.toBe(cacheA)
    expect(a.cache).toEqual({})
    expect(b.cache).toBe(cacheB)
    expect(() => resetPackCache(path.join(dir, 'never.git'))).not.toThrow()
  })
})

describe('dropPackBytes', () => {
  /** The pack indexes isomorphic-git's cache holds, resolved. */
  async function cachedIndexes(cache: object): Promise<{ pack?: unknown; offsets: Map<string, number> }[]> {
    const c = cache as Record<symbol, unknown>
    const maps = Object.getOwnPropertySymbols(c)
      .map((s) => c[s])
      .filter(
        (m): m is Map<string, Promise<{ pack?: unknown; offsets: Map<string, number> }>> => m instanceof Map,
      )
    return Promise.all(maps.flatMap((m) => [...m.values()]))
  }

  // Regression: every pack a read touched stayed in memory whole for the life of the cache (the
  // commit worker's memory grew with each pack it read a missed tree from).
  it('lets go of the pack files a read loaded whole once they pass the bound, keeps their parsed indexes, and later reads still work', async () => {
    const gitdir = path.join(dir, 'packed.git')
    await initRepo(gitdir, { files: { 'a.txt': 'hello\n' }, message: 'root', branch: 'config/default' })
    git(gitdir, 'repack', '-a', '-d', '-q')
    const repo = openRepo(gitdir)
    const oid = git(gitdir, 'rev-parse', 'config/default:a.txt').trim()
    const read = async (): Promise<string> =>
      Buffer.from((await isogit.readBlob({ fs: repo.fs, gitdir, cache: repo.cache, oid })).blob).toString()
    expect(await read()).toBe('hello\n')
    const [index] = await cachedIndexes(repo.cache)
    expect(Buffer.isBuffer(await index!.pack)).toBe(true)
    const size = fs.statSync(
      path.join(
        gitdir,
        'objects',
        'pack',
        fs.readdirSync(path.join(gitdir, 'objects', 'pack')).find((f) => f.endsWith('.pack'))!,
      ),
    ).size
    expect(await dropPackBytes(repo, size)).toBe(size)
    expect(Buffer.isBuffer(await index!.pack)).toBe(true)
    expect(await dropPackBytes(repo, size - 1)).toBe(size)
    expect(index!.pack).toBeNull()
    expect(await dropPackBytes(repo, 0)).toBe(0)
    expect(index!.offsets.has(oid)).toBe(true)
    expect(await read()).toBe('hello\n')
    expect(await cachedIndexes(repo.cache)).toEqual([index])
  })
})

describe('the pack bytes a handle keeps', () => {
  /** A repository of `count` packs, one blob each; the blobs' oids, and the packs' total size. */
  async function packs(
    name: string,
    count: number,
  ): Promise<{ gitdir: string; oids: string[]; bytes: number }> {
    const gitdir = path.join(dir, name)
    await initRepo(gitdir, { files: { 'a.txt': 'root\n' }, message: 'root', branch: 'config/default' })
    git(gitdir, 'repack', '-a', '-d', '-q')
    const oids: string[] = []
    for (let i = 0; i < count; i++) {
      const file = path.join(dir, `${name}-${i}.txt`)
      fs.writeFileSync(file, `blob ${i} ${'x'.repeat(2000 + i)}\n`)
      const oid = git(gitdir, 'hash-object', '-w', file).trim()
      oids.push(oid)
      // The loose blob into a pack of its own.
      gitBytes(gitdir, ['pack-objects', '-q', 'objects/pack/pack'], `${oid}\n`)
      fs.rmSync(path.join(gitdir, 'objects', oid.slice(0, 2), oid.slice(2)))
    }
    const packDir = path.join(gitdir, 'objects', 'pack')
    const bytes = fs
      .readdirSync(packDir)
      .filter((f) => f.endsWith('.pack'))
      .reduce((n, f) => n + fs.statSync(path.join(packDir, f)).size, 0)
    return { gitdir, oids, bytes }
  }
  const readAll = async (gitdir: string, oids: string[]): Promise<void> => {
    const repo = openRepo(gitdir)
    for (const oid of oids) await isogit.readBlob({ fs: repo.fs, gitdir, cache: repo.cache, oid })
  }
  const held = (gitdir: string): number => [...openRepo(gitdir).packsRead.values()].reduce((a, b) => a + b, 0)

  it('lets go of the others once the packs read pass the bound, keeping the pack just read, and a later read still works', async () => {
    const { gitdir, oids } = await packs('bound.git', 3)
    const repo = openRepo(gitdir)
    repo.packBytesKept = 1 // every pack is over it
    await readAll(gitdir, oids)
    await new Promise((r) => setImmediate(r)) // the drop awaits the parsed indexes
    expect(repo.packsRead.size).toBe(1)
    const last = oids[oids.length - 1] as string
    const kept = [...repo.packsRead.keys()][0] as string
    const index = (await (
      [
        ...Object.getOwnPropertySymbols(repo.cache).map((s) => (repo.cache as Record<symbol, unknown>)[s]),
      ].find((m) => m instanceof Map) as Map<string, Promise<{ offsets: Map<string, number> }>>
    ).get(kept)) as { offsets: Map<string, number> }
    expect(index.offsets.has(last)).toBe(true)
    await readAll(gitdir, oids) // the dropped packs are read again from the disk
    expect(repo.packsRead.size).toBeGreaterThanOrEqual(1)
  })

  it('keeps every pack read while under the bound, and dropAllPackBytes lets go of all of them, in every handle', async () => {
    const a = await packs('a.git', 2)
    const b = await packs('b.git', 1)
    await readAll(a.gitdir, a.oids)
    await readAll(b.gitdir, b.oids)
    expect(openRepo(a.gitdir).packsRead.size).toBe(2)
    const before = held(a.gitdir) + held(b.gitdir)
    expect(before).toBeGreaterThan(0)
    expect(await dropAllPackBytes()).toBeGreaterThanOrEqual(before)
    expect(held(a.gitdir) + held(b.gitdir)).toBe(0)
    await readAll(a.gitdir, a.oids)
    expect(openRepo(a.gitdir).packsRead.size).toBe(2)
  })
})

describe('writeRepoFile', () => {
  it('replaces a file whole through a temp file beside it, taking an encoding as git-style options', async () => {
    const file = path.join(dir, 'config')
    fs.writeFileSync(file, 'old contents that are longer\n')
    await writeRepoFile(file, 'new\n', 'utf8')
    expect(fs.readFileSync(file, 'utf8')).toBe('new\n')
    await writeRepoFile(file, new Uint8Array([104, 105]), { mode: 0o644 })
    expect(fs.readFileSync(file, 'utf8')).toBe('hi')
    expect(fs.readdirSync(dir)).toEqual(['config'])
  })

  it('fails with ENOENT in a missing directory and leaves nothing behind', async () => {
    const file = path.join(dir, 'missing', 'x')
    await expect(writeRepoFile(file, 'x')).rejects.toMatchObject({ code: 'ENOENT' })
    expect(fs.readdirSync(dir)).toEqual([])
    // A rename that fails (a directory in the way) removes its temp file.
    fs.mkdirSync(path.join(dir, 'in-the-way', 'child'), { recursive: true })
    await expect(writeRepoFile(path.join(dir, 'in-the-way'), 'x')).rejects.toThrow()
    expect(fs.readdirSync(dir)).toEqual(['in-the-way'])
  })
})

describe("the handle's fs under isomorphic-git", () => {
  it('writes loose objects git reads, into existing fan-out directories, with no temp file left', async () => {
    const gitdir = path.join(dir, 'repo.git')
    await initRepo(gitdir, {
      files: { 'providers.yaml': 'roles: {}\n' },
      message: 'root',
      branch: 'config/default',
    })
    const repo = openRepo(gitdir)
    const io = { fs: repo.fs, gitdir: repo.gitdir }
    const oids: string[] = []
    // Many blobs: some share a fan-out directory, so mkdir meets EEXIST and must let the write go on.
    for (let i = 0; i < 40; i++)
      oids.push(await isogit.writeBlob({ ...io, blob: Buffer.from(`blob ${i}\n`) }))
    for (const [i, oid] of oids.entries()) {
      expect(fs.existsSync(path.join(gitdir, 'objects', oid.slice(0, 2), oid.slice(2)))).toBe(true)
      if (i % 13 === 0) expect(git(gitdir, 'cat-file', 'blob', oid)).toBe(`blob ${i}\n`)
    }
    // Writing an object that exists again is harmless.
    expect(await isogit.writeBlob({ ...io, blob: Buffer.from('blob 0\n') })).toBe(oids[0])
    expect(tempLeftovers(path.join(gitdir, 'objects'))).toEqual([])
    expect(git(gitdir, 'fsck', '--strict', '--no-dangling')).toBe('')
  })
})
