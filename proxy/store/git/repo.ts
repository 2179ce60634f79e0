/**
 * The handle on one bare repository (`<home>/workspaces/<ws>/repo.git`, cached per resolved path):
 * the fs isomorphic-git writes through, its pack cache, and LRU caches of parsed trees and commit → tree.
 * Invariant: a file isomorphic-git writes appears whole or not at all (temp file beside it, then
 * rename), so a kill -9 never leaves a truncated loose object. Opening touches no disk.
 */
import { promises as fsp } from 'node:fs'
import * as path from 'node:path'
import { threadId } from 'node:worker_threads'
import type { FsClient, PromiseFsClient, TreeEntry } from 'isomorphic-git'
import { FileSystem } from 'isomorphic-git/models'

export type { TreeEntry }

/** Bounded map that forgets the least recently used key; for immutable values keyed by oid. */
export class Lru<V> {
  private readonly map = new Map<string, V>()
  constructor(private readonly max: number) {}
  get(key: string): V | undefined {
    const v = this.map.get(key)
    if (v !== undefined) {
      this.map.delete(key)
      this.map.set(key, v)
    }
    return v
  }
  set(key: string, value: V): void {
    this.map.delete(key)
    this.map.set(key, value)
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value as string)
  }
  values(): IterableIterator<V> {
    return this.map.values()
  }
}

export interface Repo {
  /** Absolute path of the bare repository. */
  readonly gitdir: string
  /** The fs client handed to every isomorphic-git call. */
  readonly fs: FsClient
  /** isomorphic-git's cache (parsed pack indexes); replaced after `maintain` repacks. */
  cache: object
  /** Parsed trees by tree oid (entries as isomorphic-git returns them, never mutated). */
  readonly trees: Lru<readonly TreeEntry[]>
  /** Root tree oid by commit oid. */
  readonly commitTrees: Lru<string>
  /** Pack indexes listed and gone before they could be read (read as empty: see `readFile`). */
  vanished: number
  /** The packs isomorphic-git read whole and holds (by index file: their bytes), until dropped. */
  readonly packsRead: Map<string, number>
  /** Past this many bytes of them, the others are let go as a pack is read (PACK_BYTES_KEPT). */
  packBytesKept: number
}

/**
 * Bytes of pack files one handle keeps in memory once read (isomorphic-git reads a pack whole to
 * find one object in it, and keeps it): past it, the others are let go as a pack is read; the
 * pack just read stays (it is read again soon: a step's trees and blobs are in one pack), and the
 * idle collection lets go of all of them (`dropAllPackBytes`).
 */
export const PACK_BYTES_KEPT = 16 * 1024 * 1024

let tempCounter = 0

function tempFor(file: string): string {
  return path.join(path.dirname(file), `tmp_obj_hf${process.pid}_${++tempCounter}_${threadId}`)
}
function writeOptions(options: unknown): object {
  return { ...(typeof options === 'string' ? { encoding: options } : (options ?? {})), flag: 'wx' }
}

/**
 * `writeFile` as a temp file beside the target, renamed into place. The `tmp_obj_` prefix is
 * the one `git prune` removes when a crash leaves such a file behind. A missing directory fails
 * with ENOENT, which isomorphic-git answers by creating it and writing again.
 */
export async function writeRepoFile(
  file: string,
  data: Uint8Array | string,
  options?: unknown,
): Promise<void> {
  const temp = tempFor(file)
  try {
    await fsp.writeFile(temp, data, writeOptions(options))
    await fsp.rename(temp, file)
  } catch (err) {
    await fsp.rm(temp, { force: true })
    throw err
  }
}

function tolerateExists(err: unknown): void {
  if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
}

/**
 * `readdir`, and when it lists a repository's packs (isomorphic-git does before every packed read)
 * the packs no longer there are forgotten: an agent's chain pack is replaced at each of its
 * commits, and each parsed index (with what was read through it) would otherwise stay cached.
 */
async function readdir(dir: string, ...rest: unknown[]): Promise<string[]> {
  const list = (await (fsp.readdir as (d: string, ...r: unknown[]) => Promise<string[]>)(
    dir,
    ...rest,
  )) as string[]
  if (dir.endsWith('/objects/pack')) {
    const repo = handles.get(dir.slice(0, -'/objects/pack'.length))
    if (repo) forgetGone(repo, dir, new Set(list))
  }
  return list
}

/** The parsed pack indexes of a handle's cache, by index file (isomorphic-git's own map). */
function packIndexes(repo: Repo): Map<string, Promise<unknown>> | undefined {
  const cache = repo.cache as Record<symbol, unknown>
  for (const sym of Object.getOwnPropertySymbols(cache)) {
    const packs = cache[sym]
    if (packs instanceof Map) return packs as Map<string, Promise<unknown>>
  }
  return undefined
}

/**
 * Forget the pack indexes of a handle's cache that could not be read (a pack removed between its
 * listing and its reading): the next read lists the packs again and reads only what it has not.
 * Dropping the whole cache instead made a retry read every index again, and with many agents'
 * chain packs being replaced, the retry met the same race.
 */
export async function forgetUnreadable(repo: Repo): Promise<void> {
  const indexes = packIndexes(repo)
  if (!indexes) return
  for (const [file, p] of [...indexes]) {
    const index = await p.catch(() => undefined)
    if (index === undefined || index === null) indexes.delete(file)
  }
}

function forgetGone(repo: Repo, dir: string, present: ReadonlySet<string>): void {
  const indexes = packIndexes(repo)
  if (!indexes) return
  for (const file of indexes.keys())
    if (file.startsWith(`${dir}/`) && !present.has(file.slice(dir.length + 1))) {
      indexes.delete(file)
      repo.packsRead.delete(file)
    }
}

/** A version 2 pack index listing no object (header, fan-out of zeros, two checksums). */
const EMPTY_INDEX = Buffer.concat([
  Buffer.from([0xff, 0x74, 0x4f, 0x63, 0, 0, 0, 2]),
  Buffer.alloc(1024 + 40),
])
const PACK_INDEX = /^(.*)\/objects\/pack\/pack-[0-9a-f]{40}\.idx$/
const PACK_FILE = /^(.*)\/objects\/pack\/(pack-[0-9a-f]{40})\.pack$/

/** A pack read whole for isomorphic-git: noted in its handle, and the others let go past PACK_BYTES_KEPT. */
function packRead(file: string, bytes: number): void {
  const m = PACK_FILE.exec(file)
  const repo = m ? handles.get(m[1] as string) : undefined
  if (!repo) return
  const index = `${file.slice(0, -'.pack'.length)}.idx`
  repo.packsRead.set(index, bytes)
  let held = 0
  for (const n of repo.packsRead.values()) held += n
  if (held > repo.packBytesKept) void dropPackBytes(repo, 0, index)
}

/**
 * `readFile`, but a pack index gone since it was listed (its pack replaced by an extended chain,
 * or merged) reads as an index of no object, and the handle counts it: isomorphic-git goes on to
 * the other packs instead of failing the read, and a read that then finds nothing is tried again
 * (read.ts), listing the packs anew (the pack that replaced it was written before it went).
 */
async function readFile(file: string, ...rest: unknown[]): Promise<Buffer | string> {
  try {
    const data = await (fsp.readFile as (f: string, ...r: unknown[]) => Promise<Buffer | string>)(
      file,
      ...rest,
    )
    if (file.endsWith('.pack')) packRead(file, data.length)
    return data
  } catch (err) {
    const m = (err as NodeJS.ErrnoException).code === 'ENOENT' ? PACK_INDEX.exec(file) : null
    const repo = m ? handles.get(m[1] as string) : undefined
    if (!repo) throw err
    repo.vanished++
    return EMPTY_INDEX
  }
}

const nodeFs: PromiseFsClient = {
  promises: {
    readFile,
    writeFile: writeRepoFile,
    unlink: fsp.unlink,
    readdir,
    mkdir: (...a: Parameters<typeof fsp.mkdir>) => fsp.mkdir(...a).then(() => undefined, tolerateExists),
    rmdir: fsp.rmdir,
    stat: fsp.stat,
    lstat: fsp.lstat,
    readlink: fsp.readlink,
    symlink: fsp.symlink,
    chmod: fsp.chmod,
  },
}

/**
 * The fs client for isomorphic-git: Node's fs with crash-safe writeFile and mkdir that tolerates
 * EEXIST. Handed over already wrapped in isomorphic-git's FileSystem: a plain client is re-wrapped
 * on every call, probing `readFile()` twice (docs/performance.md).
 */
const repoFs = new FileSystem(nodeFs) as unknown as FsClient

const handles = new Map<string, Repo>()

/** The handle for `gitdir` (cheap, cached per resolved path; does not touch the disk). */
export function openRepo(gitdir: string): Repo {
  const abs = path.resolve(gitdir)
  let repo = handles.get(abs)
  if (repo === undefined) {
    repo = {
      gitdir: abs,
      fs: repoFs,
      cache: {},
      trees: new Lru(2048),
      commitTrees: new Lru(4096),
      vanished: 0,
      packsRead: new Map(),
      packBytesKept: PACK_BYTES_KEPT,
    }
    handles.set(abs, repo)
  }
  return repo
}

/** Forget the pack cache of an open handle (after a repack replaced the packs). */
export function resetPackCache(gitdir: string): void {
  const repo = handles.get(path.resolve(gitdir))
  if (repo !== undefined) {
    repo.cache = {}
    repo.packsRead.clear()
  }
}

/**
 * Let go of the pack files isomorphic-git read whole to find an object (its cache keeps each one
 * for the life of the cache), all but `spare`, once together they pass `keepBytes`. Parsed pack
 * indexes stay; a later read of a dropped pack reads the file again. Resolves with the bytes held
 * before.
 */
export async function dropPackBytes(repo: Repo, keepBytes = 0, spare?: string): Promise<number> {
  let held = 0
  for (const n of repo.packsRead.values()) held += n
  if (held <= keepBytes) return held
  const indexes = packIndexes(repo)
  for (const file of [...repo.packsRead.keys()]) {
    if (file === spare) continue
    repo.packsRead.delete(file)
    const index = await indexes?.get(file)?.catch(() => undefined)
    if (index && typeof index === 'object' && 'pack' in index) (index as { pack: unknown }).pack = null
  }
  return held
}

/** Let go of every pack read whole, in every handle of this thread (the idle collection: nothing is read meanwhile). */
export async function dropAllPackBytes(): Promise<number> {
  let held = 0
  for (const repo of handles.values()) held += await dropPackBytes(repo, 0)
  return held
}
