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
}

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
    if (file.startsWith(`${dir}/`) && !present.has(file.slice(dir.length + 1))) indexes.delete(file)
}

/** A version 2 pack index listing no object (header, fan-out of zeros, two checksums). */
const EMPTY_INDEX = Buffer.concat([
  Buffer.from([0xff, 0x74, 0x4f, 0x63, 0, 0, 0, 2]),
  Buffer.alloc(1024 + 40),
])
const PACK_INDEX = /^(.*)\/objects\/pack\/pack-[0-9a-f]{40}\.idx$/

/**
 * `readFile`, but a pack index gone since it was listed (its pack replaced by an extended chain,
 * or merged) reads as an index of no object, and the handle counts it: isomorphic-git goes on to
 * the other packs instead of failing the read, and a read that then finds nothing is tried again
 * (read.ts), listing the packs anew (the pack that replaced it was written before it went).
 */
async function readFile(file: string, ...rest: unknown[]): Promise<Buffer | string> {
  try {
    return await (fsp.readFile as (f: string, ...r: unknown[]) => Promise<Buffer | string>)(file, ...rest)
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
    }
    handles.set(abs, repo)
  }
  return repo
}

/** Forget the pack cache of an open handle (after a repack replaced the packs). */
export function resetPackCache(gitdir: string): void {
  const repo = handles.get(path.resolve(gitdir))
  if (repo !== undefined) repo.cache = {}
}

/**
 * Let go of the pack files isomorphic-git read whole to find an object, once together they pass
 * `keepBytes` (its cache keeps each one for the life of the cache: under load a commit worker read
 * one per missed tree and kept them all). Parsed pack indexes stay; a later read of a dropped pack
 * reads the file again, so the bound is set well above one pack. Resolves with the bytes held before.
 */
export async function dropPackBytes(repo: Repo, keepBytes = 0): Promise<number> {
  const indexes: { pack?: unknown }[] = []
  for (const p of (packIndexes(repo)?.values() ?? []) as Iterable<Promise<{ pack?: unknown }>>) {
    const index = await p.catch(() => undefined)
    if (index && typeof index === 'object' && 'pack' in index) indexes.push(index)
  }
  let held = 0
  for (const index of indexes) {
    const bytes = await Promise.resolve(index.pack).catch(() => null)
    if (Buffer.isBuffer(bytes)) held += bytes.length
  }
  if (held > keepBytes) for (const index of indexes) index.pack = null
  return held
}
