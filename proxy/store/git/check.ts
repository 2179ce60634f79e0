/**
 * What a start checks of a workspace repository before anything reads it, so a power cut never
 * bricks it: every pack and its index must be whole (the index's own SHA-1 trailer right, the pack
 * starting `PACK` and ending with the checksum its index names); one that is not is moved aside to
 * `<ws>/damaged-packs/` (git and isomorphic-git then never meet it). Then every `agents/*` tip must
 * be readable (its commit, its trees down to its last step); one that is not is moved back along its
 * reflog to the newest commit that is, and the range it loses is reported (the journal, when it
 * still holds those steps, commits them again). Pack files no index names (what a kill or a power
 * cut left of a write or a removal: a temp file, a `.pack` without its `.idx`, a `.rev` or `.bitmap`
 * without its `.pack`) are removed and named. Invariant: nothing an index names, and no ref, is
 * deleted (a pack with its index is never removed); a ref moves only by compare-and-swap, with a
 * reflog line saying why.
 */
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { AGENTS_PREFIX, stepOfSubject } from '../../core/layout'
import { formatStep } from '../../core/naming'
import git from 'isomorphic-git'
import { resetPackCache, type Repo } from './repo'
import { appendReflog, highestInReflog, readReflog } from './reflog'
import { casRef, deleteRef, listRefs } from './refs'

/** A pack (or index) moved aside, and why. */
export interface MovedPack {
  name: string
  reason: string
  to: string
}

/** A branch moved back because its tip could not be read. */
export interface Rewound {
  ref: string
  from: string
  /** The commit it now names; null when none of its reflog could be read (the ref was moved aside). */
  to: string | null
  /** The steps the branch no longer holds (the journal may commit them again), as numbers. */
  lost: { from: number; to: number } | null
  reason: string
}

const IDX_MAGIC = Buffer.from([0xff, 0x74, 0x4f, 0x63])
/** Header (8) + fan-out (1024) + the two trailing checksums (40): an index holding no object. */
const IDX_MIN = 8 + 1024 + 40

/** Why the index and pack of `base` (`…/pack-<sha>`) are not whole, or undefined when they are. */
export function packProblem(base: string): string | undefined {
  let idx: Buffer
  try {
    idx = fs.readFileSync(`${base}.idx`)
  } catch (err) {
    return `its index cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`
  }
  if (idx.length < IDX_MIN) return `its index is ${idx.length} bytes long, shorter than any index`
  if (!idx.subarray(0, 4).equals(IDX_MAGIC) || idx.readUInt32BE(4) !== 2)
    return 'its index is not a version 2 index'
  const sum = createHash('sha1')
    .update(idx.subarray(0, idx.length - 20))
    .digest()
  if (!sum.equals(idx.subarray(idx.length - 20))) return "its index's checksum does not match its bytes"
  const packSum = idx.subarray(idx.length - 40, idx.length - 20)
  let fd: number
  try {
    fd = fs.openSync(`${base}.pack`, 'r')
  } catch (err) {
    return `its pack cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`
  }
  try {
    const size = fs.fstatSync(fd).size
    if (size < 32) return `its pack is ${size} bytes long, shorter than any pack`
    const head = Buffer.alloc(4)
    const tail = Buffer.alloc(20)
    fs.readSync(fd, head, 0, 4, 0)
    fs.readSync(fd, tail, 0, 20, size - 20)
    if (!head.equals(Buffer.from('PACK'))) return 'its pack does not start with PACK'
    if (!tail.equals(packSum)) return 'its pack does not end with the checksum its index names'
  } finally {
    fs.closeSync(fd)
  }
  return undefined
}

/** The names in a pack directory; none when it does not exist yet. */
function packDirNames(dir: string): string[] {
  try {
    return fs.readdirSync(dir)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw err
  }
}

/** Move aside every pack of `gitdir` that is not whole (to `aside`), and an index without its pack. */
export function checkPacks(gitdir: string, aside: string): MovedPack[] {
  const dir = path.join(gitdir, 'objects', 'pack')
  const names = packDirNames(dir)
  const moved: MovedPack[] = []
  for (const name of names.filter((n) => n.endsWith('.idx'))) {
    const stem = name.slice(0, -'.idx'.length)
    const reason = packProblem(path.join(dir, stem))
    if (!reason) continue
    fs.mkdirSync(aside, { recursive: true })
    for (const ext of ['.idx', '.pack', '.rev', '.keep']) {
      const from = path.join(dir, `${stem}${ext}`)
      if (!fs.existsSync(from)) continue
      let to = path.join(aside, `${stem}${ext}`)
      for (let k = 2; fs.existsSync(to); k++) to = path.join(aside, `${stem}.${k}${ext}`)
      fs.renameSync(from, to)
    }
    moved.push({ name: stem, reason, to: aside })
  }
  if (moved.length > 0) resetPackCache(gitdir)
  return moved
}

/**
 * Remove the files of `gitdir`'s pack directory that no pack index names, and return their names:
 * temp files (`tmp_*`: git's `tmp_pack_`, `tmp_idx_`, … and holdfast's `tmp_pack_hf`), a
 * `pack-*.pack` without its `.idx` (a kill between the write's two renames, or inside a removal,
 * which takes the index first), and a `.rev` or `.bitmap` whose `.pack` (or index) is gone. Neither
 * git nor isomorphic-git reads any of them (both find a pack by its index), and no ref names what
 * only they hold: a ref moves only once a pack and its index are both on the disk. Left alone: a
 * pack with its index; a pack with a `.keep` (git's own, or a git fetch under way), and the
 * `.keep`, `.promisor` and `.mtimes` files, which are git's. Only at a start, under the home lock:
 * a writer of this repository under way would lose its temp file. A file the disk refuses to
 * remove stays for the next start.
 */
export function removeOrphans(gitdir: string): string[] {
  const dir = path.join(gitdir, 'objects', 'pack')
  const names = packDirNames(dir)
  const present = new Set(names)
  const whole = (stem: string): boolean => present.has(`${stem}.pack`) && present.has(`${stem}.idx`)
  const orphan = (name: string): boolean => {
    if (name.startsWith('tmp_')) return true
    const m = /^(pack-[0-9a-f]{40})\.(pack|rev|bitmap)$/.exec(name)
    if (!m) return false
    const stem = m[1] as string
    return !present.has(`${stem}.keep`) && !whole(stem)
  }
  const removed: string[] = []
  for (const name of names.filter(orphan).sort()) {
    try {
      fs.rmSync(path.join(dir, name), { force: true, recursive: true })
      removed.push(name)
    } catch {
      // A disk that refuses it (read-only): the file stays, and the next start tries again.
    }
  }
  return removed
}

/** A loose ref file that holds no object id, moved aside. */
export interface MovedRef {
  ref: string
  to: string
}

/**
 * Move aside every loose ref under `refs/` that holds no object id (a power cut leaves a renamed
 * ref file empty): git and holdfast then read the ref from `packed-refs`, or as absent (a branch
 * created again; `config/default` made again by the next start).
 */
export function checkRefs(gitdir: string, aside: string): MovedRef[] {
  const moved: MovedRef[] = []
  const walk = (rel: string): void => {
    let entries: fs.Dirent[]
    try {
      entries = fs.readdirSync(path.join(gitdir, rel), { withFileTypes: true })
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return
      throw err
    }
    for (const e of entries) {
      const ref = `${rel}/${e.name}`
      if (e.isDirectory()) walk(ref)
      else if (!e.name.endsWith('.lock')) {
        const text = fs.readFileSync(path.join(gitdir, ref), 'utf8')
        if (/^[0-9a-f]{40}\s*$/.test(text) || text.startsWith('ref: ')) continue
        const to = path.join(aside, ref)
        fs.mkdirSync(path.dirname(to), { recursive: true })
        fs.renameSync(path.join(gitdir, ref), to)
        moved.push({ ref, to })
      }
    }
  }
  walk('refs')
  return moved
}

/**
 * Whether `commit` of `agent`'s branch reads from the disk: the commit, its root tree, and its
 * step's directory. Read through a cache of this check's own (`cache`): what an earlier read in this
 * process kept must not stand in for what the disk holds now.
 */
async function readable(repo: Repo, cache: object, agent: string, commit: string): Promise<boolean> {
  const io = { fs: repo.fs, gitdir: repo.gitdir, cache }
  try {
    const { commit: c } = await git.readCommit({ ...io, oid: commit })
    let entries = (await git.readTree({ ...io, oid: c.tree })).tree
    const step = stepOfSubject(c.message)
    if (!step) return true // a branch's first commit may be a config or dispatch commit
    for (const name of ['steps', agent, formatStep(step.n)]) {
      const e = entries.find((x) => x.path === name)
      if (!e || e.type !== 'tree') return false
      entries = (await git.readTree({ ...io, oid: e.oid })).tree
    }
    return true
  } catch {
    return false
  }
}

/**
 * Rewrite the reflog of `ref` without the lines that name a commit the disk no longer has (git
 * fsck calls such lines invalid), then append the move back. Written aside and renamed over.
 */
async function pruneReflog(repo: Repo, cache: object, ref: string, why: string, to: string): Promise<void> {
  const file = path.join(repo.gitdir, 'logs', ref)
  const have = new Map<string, boolean>()
  const exists = async (oid: string): Promise<boolean> => {
    if (/^0{40}$/.test(oid)) return true
    let known = have.get(oid)
    if (known === undefined) {
      known = await git.readCommit({ fs: repo.fs, gitdir: repo.gitdir, cache, oid }).then(
        () => true,
        () => false,
      )
      have.set(oid, known)
    }
    return known
  }
  const kept: string[] = []
  for (const line of (fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '').split('\n')) {
    const m = /^([0-9a-f]{40}) ([0-9a-f]{40}) /.exec(line)
    if (m && (await exists(m[1] as string)) && (await exists(m[2] as string))) kept.push(line)
  }
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(`${file}.tmp`, kept.map((l) => `${l}\n`).join(''))
  fs.renameSync(`${file}.tmp`, file)
  // The line's old value is the commit moved back to as well: the lost one is in no object any more.
  appendReflog(repo.gitdir, ref, to, to, why)
}

/**
 * Move every `agents/*` branch whose tip cannot be read back to the newest commit of its reflog
 * that can (or, when none can, delete it, keeping its value in a file under `aside`).
 */
export async function checkTips(repo: Repo, aside: string): Promise<Rewound[]> {
  const out: Rewound[] = []
  const cache = {}
  for (const { ref, oid } of await listRefs(repo, AGENTS_PREFIX)) {
    const agent = ref.slice(AGENTS_PREFIX.length)
    if (await readable(repo, cache, agent, oid)) continue
    const log = readReflog(repo.gitdir, ref)
    const named = highestInReflog(repo.gitdir, ref) // what it held before the cut
    let to: string | null = null
    for (const e of log) {
      for (const candidate of [e.to, e.from]) {
        if (candidate === oid || /^0{40}$/.test(candidate)) continue
        if (await readable(repo, cache, agent, candidate)) {
          to = candidate
          break
        }
      }
      if (to) break
    }
    const kept = to
      ? (stepOfSubject(
          (await git.readCommit({ fs: repo.fs, gitdir: repo.gitdir, cache, oid: to })).commit.message,
        )?.n ?? 0)
      : 0
    const reason = `the tip ${oid.slice(0, 12)} of ${ref} cannot be read (its objects were lost)`
    if (to) {
      await casRef(repo, ref, to, oid)
      await pruneReflog(repo, cache, ref, `holdfast: moved back: ${reason}`, to)
    } else {
      // Nothing to go back to: the ref is kept aside as a file (a ref naming a missing object
      // would fail git fsck and git gc), and the branch starts again.
      const file = path.join(aside, ref)
      fs.mkdirSync(path.dirname(file), { recursive: true })
      fs.writeFileSync(file, `${oid}\n`)
      await deleteRef(repo, ref, oid)
    }
    out.push({ ref, from: oid, to, lost: named > kept ? { from: kept + 1, to: named } : null, reason })
  }
  return out
}
