/**
 * The handle on one bare repository (`<home>/workspaces/<ws>/repo.git`, cached per resolved path):
 * the fs isomorphic-git writes through, its pack cache, and LRU caches of parsed trees and commit → tree.
 * Invariant: a file isomorphic-git writes appears whole or not at all (temp file beside it, then
 * rename), so a kill -9 never leaves a truncated loose object. Opening touches no disk.
 */
import { promises as fsp } from 'node:fs'
import * as path from 'node:path'
import type { PromiseFsClient, TreeEntry } from 'isomorphic-git'

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
}

export interface Repo {
  /** Absolute path of the bare repository. */
  readonly gitdir: string
  /** The fs client handed to every isomorphic-git call. */
  readonly fs: PromiseFsClient
  /** isomorphic-git's cache (parsed pack indexes); replaced after `maintain` repacks. */
  cache: object
  /** Parsed trees by tree oid (entries as isomorphic-git returns them, never mutated). */
  readonly trees: Lru<readonly TreeEntry[]>
  /** Root tree oid by commit oid. */
  readonly commitTrees: Lru<string>
}

let tempCounter = 0

/**
 * `writeFile` as a temp file beside the target, renamed into place. The `tmp_obj_` prefix is
 * the one `git prune` removes when a crash leaves such a file behind. A missing directory fails
 * with ENOENT, which isomorphic-git answers by creating it and writing again.
 */
async function writeFileAtomic(file: string, data: Uint8Array | string, options?: unknown): Promise<void> {
  const temp = path.join(path.dirname(file), `tmp_obj_hf${process.pid}_${++tempCounter}`)
  const opts = typeof options === 'string' ? { encoding: options as BufferEncoding } : (options ?? {})
  try {
    await fsp.writeFile(temp, data, { ...(opts as object), flag: 'wx' })
    await fsp.rename(temp, file)
  } catch (err) {
    await fsp.rm(temp, { force: true })
    throw err
  }
}

/** `mkdir` that treats an existing directory as success. */
async function mkdirTolerant(dir: string, options?: unknown): Promise<void> {
  try {
    await fsp.mkdir(dir, options as Parameters<typeof fsp.mkdir>[1])
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
  }
}

/**
 * The fs client for isomorphic-git: its FileSystem binds `fs.promises` when that property is
 * enumerable, and probes `readFile()` for a promise; everything but writeFile/mkdir is Node's.
 */
export const repoFs: PromiseFsClient = {
  promises: {
    readFile: fsp.readFile,
    writeFile: writeFileAtomic,
    unlink: fsp.unlink,
    readdir: fsp.readdir,
    mkdir: mkdirTolerant,
    rmdir: fsp.rmdir,
    stat: fsp.stat,
    lstat: fsp.lstat,
    readlink: fsp.readlink,
    symlink: fsp.symlink,
    chmod: fsp.chmod,
  },
}

const handles = new Map<string, Repo>()

/** The handle for `gitdir` (cheap, cached per resolved path; does not touch the disk). */
export function openRepo(gitdir: string): Repo {
  const abs = path.resolve(gitdir)
  let repo = handles.get(abs)
  if (repo === undefined) {
    repo = { gitdir: abs, fs: repoFs, cache: {}, trees: new Lru(2048), commitTrees: new Lru(4096) }
    handles.set(abs, repo)
  }
  return repo
}

/** Forget the pack cache of an open handle (after a repack replaced the packs). */
export function resetPackCache(gitdir: string): void {
  const repo = handles.get(path.resolve(gitdir))
  if (repo !== undefined) repo.cache = {}
}
