/**
 * Chain packs: each agent's commits go into one pack of its own, extended batch by batch, so an
 * object can be a delta on the agent's previous one (a request on the previous request: the
 * repository grows by the new bytes, not by the whole conversation again). Git reads no delta
 * across packs, so extending a chain writes a new pack: the old one's entries copied as they are,
 * the new objects after them; the old pack is removed once the new one is on the disk. Past
 * CHAIN_MAX bytes a chain is closed (left as it is) and the agent's next batch starts a new one.
 * Invariant: a pack is removed only when a pack holding all it held has been flushed to the disk
 * (removing it first would let a power cut take steps acknowledged long before). Data: in memory,
 * per repository, each agent's open chain (its pack's name and size, and the objects the next
 * batch deltas on: at most BASES_BUDGET bytes of them); after a restart each agent starts a new
 * chain.
 */
import fs from 'node:fs'
import path from 'node:path'
import type { GitObject } from './objects'
import { PackBuilder } from './pack'
import { readIndex } from './pack-index'

/** A chain this long is closed: extending it would copy (and hash) more than the new bytes are worth. */
export const CHAIN_MAX = 2 * 1024 * 1024
/** Open chains remembered (the least recently extended is forgotten first). */
const CHAINS_KEPT = 256
/**
 * Bytes of bases (each chain's last request and tree) kept over all chains: past it, the least
 * recently extended chains let theirs go (their next request is written whole); without a budget
 * the bases of many large chains stayed in the commit worker (docs/performance.md, chain packs).
 */
export const BASES_BUDGET = 16 * 1024 * 1024

/** An open chain: its pack, and the objects the next batch is written as deltas on. */
export interface Chain {
  gitdir: string
  name: string
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
  // A chain whose bases alone are over the budget (one very large request) keeps none either.
  if (chain.held > BASES_BUDGET) {
    held -= chain.held
    chain.bases = {}
    chain.held = 0
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
  let copied = 0
  if (old && old.size < CHAIN_MAX) {
    let bytes: Buffer | undefined
    let idx: Buffer | undefined
    try {
      // The entries are read from the index, not kept: with hundreds of chains' entries kept, the
      // commit worker's heap more than doubled (docs/performance.md, chain packs).
      idx = fs.readFileSync(path.join(dir, `${old.name}.idx`))
      bytes = fs.readFileSync(path.join(dir, `${old.name}.pack`))
    } catch (err) {
      // Merged or removed by someone else (`git gc`): the chain starts again.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
    }
    if (bytes && idx) {
      pack.copy(bytes, readIndex(idx))
      copied = pack.count
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
  if (from && pack.count === copied) {
    const merged = { ...from.bases, ...bases }
    remember(id, { ...from, bases: merged, held: sizeOfBases(merged) })
    return from.name
  }
  const written = pack.write(gitdir, options)
  if (!written) return undefined
  remember(id, {
    gitdir,
    name: written.name,
    size: written.size,
    bases,
    held: sizeOfBases(bases),
  })
  if (from && from.name !== written.name) retire(dir, from.name, written.name, options.durable === true)
  return written.name
}

/**
 * Replaced packs are removed in rounds, at most one every RETIRE_EVERY_MS: a round flushes the
 * newest pack of each chain it touches (once, however many packs that chain replaced meanwhile),
 * then removes the replaced ones. So a replaced pack also stays that long after its replacement: a
 * reader that listed the packs just before still finds the files it listed (isomorphic-git reads
 * an index, then its pack, some awaits after listing them; a reader that takes longer tries again:
 * read.ts). A flush per commit instead would be two `fdatasync`s a step, beside the server
 * thread's journal writes on the same disk. (Whether they cost it latency was not shown:
 * docs/performance.md, chain packs.)
 */
const RETIRE_EVERY_MS = 1000

interface Replaced {
  dir: string
  old: string
  successor: string
  /** The successor was flushed as it was written (`journal.fsync`). */
  flushed: boolean
}

/** Packs replaced and not removed yet. */
let replaced: Replaced[] = []
/** The round under way or scheduled, if any. */
let round: Promise<void> | undefined

/** Note that `old` was replaced by `successor` (which holds all it held); a round removes it. */
function retire(dir: string, old: string, successor: string, flushed: boolean): void {
  replaced.push({ dir, old, successor, flushed })
  schedule()
}

/** A round RETIRE_EVERY_MS from now, unless one is scheduled or under way (it schedules the next). */
function schedule(): void {
  round ??= new Promise<void>((r) => setTimeout(r, RETIRE_EVERY_MS).unref()).then(retireRound).finally(() => {
    round = undefined
    if (replaced.length > 0) schedule()
  })
}

/**
 * One round: flush each chain's newest pack (the successors no other entry replaced), then remove
 * every replaced pack, its index first. The index goes first, not the pack, and no marker file
 * lists the round: a kill between the two leaves a pack without its index, which git and
 * isomorphic-git both read past (they find a pack by its index) and the next start removes
 * (check.ts, removeOrphans); the other order would leave an index without its pack, and
 * isomorphic-git fails the read of any object such an index lists instead of going on to the pack
 * that replaced it (test/proxy/store/git/chain.orphans.test.ts). A pack that cannot be flushed
 * keeps those it replaced for the next start's merge (they only repeat objects).
 */
async function retireRound(): Promise<void> {
  const entries = replaced
  replaced = []
  const olds = new Set(entries.map((e) => path.join(e.dir, e.old)))
  const newest = new Map<string, boolean>()
  for (const e of entries) {
    const file = path.join(e.dir, e.successor)
    if (!olds.has(file)) newest.set(file, (newest.get(file) ?? true) && e.flushed)
  }
  const unflushed = new Set<string>()
  for (const [file, flushed] of newest) {
    if (flushed) continue
    try {
      for (const ext of ['.pack', '.idx']) {
        const fh = await fs.promises.open(`${file}${ext}`, 'r')
        try {
          await fh.datasync()
        } finally {
          await fh.close()
        }
      }
    } catch (err) {
      // Merged away meanwhile (maintenance writes its merge flushed): what it held is on the disk.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') unflushed.add(file)
    }
  }
  // A replaced pack whose chain's newest could not be flushed stays (its steps may be only there).
  const blocked = new Set<string>()
  for (const e of entries) if (unflushed.has(path.join(e.dir, e.successor))) blocked.add(e.old)
  let grew = true
  while (grew) {
    grew = false
    for (const e of entries)
      if (blocked.has(e.successor) && !blocked.has(e.old)) {
        blocked.add(e.old)
        grew = true
      }
  }
  for (const e of entries) {
    if (blocked.has(e.old)) continue
    for (const ext of ['.idx', '.pack'])
      await fs.promises.rm(path.join(e.dir, `${e.old}${ext}`), { force: true }).catch(() => undefined)
  }
}

/** Resolves once every replaced pack noted so far is removed (or left, when it could not be). */
export async function retired(): Promise<void> {
  while (round) await round
}
