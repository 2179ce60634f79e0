/**
 * Chain packs: each agent's commits go into one pack of its own, extended batch by batch, so an
 * object can be a delta on the agent's previous one (a request on the previous request: the
 * repository grows by the new bytes, not by the whole conversation again). Git reads no delta
 * across packs, so extending a chain writes a new pack: the old one's entries copied as they are,
 * the new objects after them; the old pack is removed once the new one is on the disk. Past
 * CHAIN_MAX bytes a chain is closed (left as it is) and the agent's next batch starts a new one.
 * Invariant: a pack is removed only when a pack holding all it held has been flushed to the disk
 * (removing it first would let a power cut take steps acknowledged long before). Data: in memory,
 * per repository, each agent's open chain (its pack's name and entries, and the objects the next
 * batch deltas on); after a restart each agent starts a new chain.
 */
import fs from 'node:fs'
import path from 'node:path'
import type { GitObject } from './objects'
import { PackBuilder, type PackEntry } from './pack'
import { Lru } from './repo'

/** A chain this long is closed: extending it would copy (and hash) more than the new bytes are worth. */
export const CHAIN_MAX = 2 * 1024 * 1024
/** Open chains remembered per repository (the least recently extended is forgotten first). */
const CHAINS_KEPT = 32

/** An open chain: its pack, and the objects the next batch is written as deltas on. */
export interface Chain {
  name: string
  entries: readonly PackEntry[]
  size: number
  /** What the next batch's objects may be deltas on, by role (`request`, `tree`). */
  bases: Readonly<Record<string, GitObject>>
}

const chains = new Map<string, Lru<Chain>>()

function chainsOf(gitdir: string): Lru<Chain> {
  let c = chains.get(gitdir)
  if (!c) chains.set(gitdir, (c = new Lru<Chain>(CHAINS_KEPT)))
  return c
}

/** The open chain of `key` (an agent) in `gitdir`, if this process has one. */
export function chainOf(gitdir: string, key: string): Chain | undefined {
  return chainsOf(gitdir).get(key)
}

/** The names of the packs that are open chains in `gitdir` (maintenance leaves them alone). */
export function openChains(gitdir: string): Set<string> {
  return new Set([...chainsOf(gitdir).values()].map((c) => c.name))
}

/** Forget every chain of `gitdir` (its packs were rewritten by someone else). */
export function forgetChains(gitdir: string): void {
  chains.delete(gitdir)
}

/**
 * Write `objects` as `key`'s chain extended (or a new chain, when it has none, it is closed or its
 * pack is gone), and remember `bases` for its next batch. Returns the pack's name (undefined when
 * there was nothing to write). Objects the chain holds already are not written again.
 */
export function extendChain(
  gitdir: string,
  key: string,
  objects: readonly GitObject[],
  bases: Readonly<Record<string, GitObject>>,
  options: { durable?: boolean } = {},
): string | undefined {
  const dir = path.join(gitdir, 'objects', 'pack')
  const old = chainOf(gitdir, key)
  const pack = new PackBuilder()
  let from: Chain | undefined
  if (old && old.size < CHAIN_MAX) {
    let bytes: Buffer | undefined
    try {
      bytes = fs.readFileSync(path.join(dir, `${old.name}.pack`))
    } catch (err) {
      // Merged or removed by someone else (`git gc`): the chain starts again.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
    }
    if (bytes) {
      pack.copy(bytes, old.entries)
      from = old
    }
  }
  for (const o of objects) pack.add(o)
  // Written (or found written): their delta links are cut, so a chain does not keep every earlier
  // request alive through them.
  for (const o of objects) {
    o.similar = undefined
    o.edit = undefined
  }
  if (from && pack.count === from.entries.length) {
    chainsOf(gitdir).set(key, { ...from, bases: { ...from.bases, ...bases } })
    return from.name
  }
  const written = pack.write(gitdir, options)
  if (!written) return undefined
  chainsOf(gitdir).set(key, { name: written.name, entries: written.entries, size: written.size, bases })
  if (from && from.name !== written.name) retire(dir, from.name, written.name, options.durable === true)
  return written.name
}

/**
 * How long a replaced pack stays after its successor is flushed: a reader that listed the packs
 * just before the replacement still finds the files it listed (isomorphic-git reads an index, then
 * its pack, some awaits after listing them; a reader that takes longer tries again: read.ts).
 */
const RETIRE_GRACE_MS = 500

/** Removals of superseded packs not done yet (each waits for its successor's flush, then the grace). */
const retiring = new Set<Promise<void>>()

/**
 * Remove the pack `old` once `successor` (which holds all it held) is on the disk (flushed as it
 * was written, or here, off this thread) and RETIRE_GRACE_MS have passed. The index goes first:
 * git finds a pack by its index, and a pack without one is ignored.
 */
function retire(dir: string, old: string, successor: string, flushed: boolean): void {
  const remove = async (): Promise<void> => {
    if (!flushed)
      for (const ext of ['.pack', '.idx']) {
        const fh = await fs.promises.open(path.join(dir, `${successor}${ext}`), 'r')
        try {
          await fh.datasync()
        } finally {
          await fh.close()
        }
      }
    await new Promise((r) => setTimeout(r, RETIRE_GRACE_MS).unref())
    for (const ext of ['.idx', '.pack']) await fs.promises.rm(path.join(dir, `${old}${ext}`), { force: true })
  }
  // A removal that fails (the successor was merged away meanwhile) leaves a pack that merely
  // repeats objects: maintenance merges it away.
  const p: Promise<void> = remove()
    .catch(() => undefined)
    .finally(() => retiring.delete(p))
  retiring.add(p)
}

/** Resolves once every superseded pack waiting for removal is removed (or left, when it could not be). */
export async function retired(): Promise<void> {
  while (retiring.size > 0) await Promise.all([...retiring])
}
