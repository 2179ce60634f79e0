/**
 * Maintenance: a repository's small packs merged into one, by copying their entries as they are
 * (PackBuilder.copy: an object two packs hold is kept once, a delta on the dropped copy pointed at
 * the kept one) — no delta search, no `git pack-objects` child, a cost in proportion to the bytes
 * merged. Which packs: those git's geometric repack (factor 2) would roll up, so each byte is
 * merged a logarithmic number of times.
 * Open chain packs (still being extended) are left alone. Invariant: the merged pack and its index
 * are on the disk before any pack it replaces is removed, each replaced pack's index before its
 * pack (a kill between leaves only files no index names: the next start removes them); nothing
 * else is deleted.
 */
import fs from 'node:fs'
import path from 'node:path'
import { openChains, retired } from './chain'
import { PackBuilder } from './pack'
import { readIndex } from './pack-index'
import { resetPackCache } from './repo'

export interface Maintained {
  /** Packs merged into one (0 when there was nothing worth merging). */
  merged: number
  /** Their bytes together, and the merged pack's. */
  before: number
  after: number
  name?: string
}

/** Files beside a pack that say git must not merge it. */
const HELD = ['.keep', '.promisor', '.mtimes']
/**
 * Files beside a pack that describe it, removed with it, the index first (as a chain's removal
 * round: chain.ts): a kill after it leaves files no index names, which the next start removes.
 */
const BESIDE = ['.idx', '.pack', '.rev', '.bitmap']

/** The packs of `gitdir` with both files, by name, with their sizes, smallest first. */
function listPacks(dir: string): { name: string; size: number }[] {
  let files: string[]
  try {
    files = fs.readdirSync(dir)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw err
  }
  const out: { name: string; size: number }[] = []
  const present = new Set(files)
  for (const f of files) {
    if (!/^pack-[0-9a-f]{40}\.idx$/.test(f)) continue
    const name = f.slice(0, -4)
    // Packs git was told to keep as they are (kept, promised by a remote, cruft with its times).
    if (HELD.some((ext) => present.has(`${name}${ext}`))) continue
    try {
      out.push({ name, size: fs.statSync(path.join(dir, `${name}.pack`)).size })
    } catch {
      // An index without its pack: not a pack git reads; left to `holdfast recover`.
    }
  }
  return out.sort((a, b) => a.size - b.size || (a.name < b.name ? -1 : 1))
}

/** No merge makes a pack larger than this: isomorphic-git reads no pack offset past 2 GiB. */
export const MERGED_MAX = 1024 * 1024 * 1024

/**
 * The packs a geometric merge takes, as `git repack --geometric=2` chooses them: from the largest
 * down, the packs each at least twice the next smaller form the progression that stays; the first
 * pair that is not, and everything smaller, is merged, with the next larger ones as long as each is
 * under twice the merged total (and the total stays under MERGED_MAX).
 */
export function packsToMerge<T extends { size: number }>(sorted: readonly T[]): T[] {
  const size = (i: number): number => (sorted[i] as T).size
  let i = sorted.length - 1
  while (i > 0 && size(i) >= 2 * size(i - 1)) i--
  if (i <= 0) return []
  let split = i + 1
  let total = 0
  for (let j = 0; j < split; j++) total += size(j)
  while (split < sorted.length && size(split) < 2 * total) total += size(split++)
  const chosen: T[] = []
  let sum = 0
  for (const p of sorted.slice(0, split)) {
    if (chosen.length > 0 && sum + p.size > MERGED_MAX) break
    chosen.push(p)
    sum += p.size
  }
  return chosen.length >= 2 ? chosen : []
}

/**
 * Merge the small packs of the bare repository `gitdir` (see the module comment), then drop the
 * open handle's pack cache. Never on a request's path: the commit worker runs it when a
 * workspace's commits go quiet.
 */
export async function maintain(gitdir: string): Promise<Maintained> {
  // Packs superseded by an extended chain are removed first: nothing merges them for nothing.
  await retired()
  if (!fs.existsSync(gitdir)) throw new Error(`the repository ${gitdir} does not exist`)
  const dir = path.join(gitdir, 'objects', 'pack')
  const open = openChains(gitdir)
  const chosen = packsToMerge(listPacks(dir).filter((p) => !open.has(p.name)))
  if (chosen.length === 0) return { merged: 0, before: 0, after: 0 }
  const pack = new PackBuilder()
  const taken: string[] = []
  for (const p of chosen) {
    let bytes: Buffer
    let idx: Buffer
    try {
      bytes = fs.readFileSync(path.join(dir, `${p.name}.pack`))
      idx = fs.readFileSync(path.join(dir, `${p.name}.idx`))
    } catch (err) {
      // Removed meanwhile (by `git gc`, or a chain's superseded pack): nothing of it to merge.
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue
      throw err
    }
    pack.copy(bytes, readIndex(idx))
    taken.push(p.name)
  }
  const written = taken.length >= 2 ? pack.write(gitdir, { durable: true }) : undefined
  if (!written) return { merged: 0, before: 0, after: 0 }
  try {
    for (const name of taken)
      if (name !== written.name)
        for (const ext of BESIDE) fs.rmSync(path.join(dir, `${name}${ext}`), { force: true })
  } finally {
    resetPackCache(gitdir)
  }
  const before = chosen.filter((p) => taken.includes(p.name)).reduce((n, p) => n + p.size, 0)
  return { merged: taken.length, before, after: written.size, name: written.name }
}
