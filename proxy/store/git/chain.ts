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
 * batch deltas on: at most BASES_BUDGET bytes of them); after a restart each agent starts a new
 * chain.
 */
import fs from 'node:fs'
import path from 'node:path'
import type { GitObject } from './objects'
import { PackBuilder, type PackEntry } from './pack'

/** A chain this long is closed: extending it would copy (and hash) more than the new bytes are worth. */
export const CHAIN_MAX = 2 * 1024 * 1024
/** Open chains remembered (the least recently extended is forgotten first). */
const CHAINS_KEPT = 256
/**
 * Bytes of bases (each chain's last request and tree) kept over all chains: past it, the least
 * recently extended chains let theirs go (their next request is written whole). 32 chains of 1 MB
 * requests held 40 MB in the commit worker after `npm run bench`.
 */
export const BASES_BUDGET = 16 * 1024 * 1024

/** An open chain: its pack, and the objects the next batch is written as deltas on. */
export interface Chain {
  gitdir: string
  name: string
  entries: readonly PackEntry[]
  size: number
  /** What the next batch's objects may be deltas on, by role (`request`, `tree`); empty once dropped for the budget. */
  bases: Readonly<Record<string, GitObject>>
  /** What the bases cost in bytes. */
  held: number
}

/** Every open chain by `<gitdir>\0<key>`, least recently extended first. */
const chains = new Map<string, Chain>()
/** Bytes of all chains' bases. */
let held = 0

const sizeOfBases = (bases: Readonly<Record<string, GitObject>>): number =>
  Object.values(bases).reduce((n, o) => n + (o.size ?? o.body.length), 0)

/** Remember `chain` as the most recently extended, and keep the others within CHAINS_KEPT and BASES_BUDGET. */
function remember(id: string, chain: Chain): void {
  forget(id)
  chains.set(id, chain)
  held += chain.held
  for (const [otherId, c] of chains) {
    if (chains.size <= CHAINS_KEPT && held <= BASES_BUDGET) break
    if (c === chain) break
    if (chains.size > CHAINS_KEPT) forget(otherId)
    else {
      held -= c.held
      c.bases = {}
      c.held = 0
    }
  }
}

function forget(id: string): void {
  const c = chains.get(id)
  if (c) {
    held -= c.held
    chains.delete(id)
  }
}

const idOf = (gitdir: string, key: string): string => `${gitdir}\0${key}`

/** The open chain of `key` (an agent) in `gitdir`, if this process has one. */
export function chainOf(gitdir: string, key: string): Chain | undefined {
  return chains.get(idOf(gitdir, key))
}

/** The names of the packs that are open chains in `gitdir` (maintenance leaves them alone). */
export function openChains(gitdir: string): Set<string> {
  return new Set([...chains.values()].filter((c) => c.gitdir === gitdir).map((c) => c.name))
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
  const id = idOf(gitdir, key)
  if (from && pack.count === from.entries.length) {
    const merged = { ...from.bases, ...bases }
    remember(id, { ...from, bases: merged, held: sizeOfBases(merged) })
    return from.name
  }
  const written = pack.write(gitdir, options)
  if (!written) return undefined
  remember(id, {
    gitdir,
    name: written.name,
    entries: written.entries,
    size: written.size,
    bases,
    held: sizeOfBases(bases),
  })
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
