/**
 * Reading many committed files at once for the reports: an agent's step files listed by one
 * `git ls-tree` and their blobs read by one `git cat-file --batch` (isomorphic-git reads one object
 * at a time: docs/performance.md), and the
 * parsed metas of committed steps kept by blob id (a blob never changes). Invariant: a blob read here is the blob
 * git holds under that id; a git that cannot answer leaves the caller to read one by one.
 */
import { gitEnv, spawnChild } from '../process/spawn'
import type { StepMeta } from '../../generated/meta'

/** Below this many blobs, one-by-one reads are cheaper than starting git. */
export const BATCH_MIN = 16

/** Run git on the repository with `input` on stdin; its stdout. */
function git(gitdir: string, args: string[], input?: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawnChild('git', ['--git-dir', gitdir, ...args], {
      stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      env: gitEnv(),
    })
    const chunks: Buffer[] = []
    let err = ''
    child.stdout?.on('data', (c: Buffer) => chunks.push(c))
    child.stderr?.on('data', (c: Buffer) => (err += c.toString()))
    child.on('error', reject)
    child.on('close', (code) =>
      code === 0
        ? resolve(Buffer.concat(chunks))
        : reject(new Error(`git ${args[0]} exited ${code}: ${err.trim()}`)),
    )
    // A git that exits before reading all of its input fails: its exit code says so, not EPIPE.
    child.stdin?.on('error', (e: NodeJS.ErrnoException) => (err ||= e.message))
    if (input !== undefined) child.stdin?.end(input)
  })
}

/** The blobs with these ids, as git holds them; ids git does not have are left out. */
export async function catBlobs(gitdir: string, oids: readonly string[]): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>()
  if (oids.length === 0) return out
  const all = await git(gitdir, ['cat-file', '--batch'], oids.join('\n') + '\n')
  let at = 0
  while (at < all.length) {
    const nl = all.indexOf(10, at)
    if (nl < 0) break
    const [oid, type, size] = all.toString('latin1', at, nl).split(' ')
    at = nl + 1
    if (type === 'missing' || size === undefined) continue
    const n = Number(size)
    if (type === 'blob') out.set(oid as string, all.subarray(at, at + n))
    at += n + 1
  }
  return out
}

/** Every file under `dir` at `commit`, by its path below `dir` (`001/meta.json`) → blob id. */
export async function lsFiles(gitdir: string, commit: string, dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>()
  const text = (await git(gitdir, ['ls-tree', '-r', '-z', commit, '--', `${dir}/`])).toString('utf8')
  for (const line of text.split('\0')) {
    const tab = line.indexOf('\t')
    if (tab < 0) continue
    const [, type, oid] = line.slice(0, tab).split(' ')
    const file = line.slice(tab + 1)
    if (type === 'blob' && file.startsWith(`${dir}/`)) out.set(file.slice(dir.length + 1), oid as string)
  }
  return out
}

const METAS_KEPT = 20_000
const metas = new Map<string, StepMeta>()
const metaOids = new Map<string, string>()

/** The meta.json blob id of a step's tree, when found before (a tree never changes). */
export const keptMetaOid = (tree: string): string | undefined => metaOids.get(tree)

export function keepMetaOid(tree: string, oid: string): void {
  metaOids.set(tree, oid)
  if (metaOids.size > METAS_KEPT) metaOids.delete(metaOids.keys().next().value as string)
}

/** A committed step's parsed meta by its blob id, when read before. */
export const keptMeta = (oid: string): StepMeta | undefined => metas.get(oid)

/** Keep a committed step's parsed meta by its blob id (the oldest go beyond a bound). */
export function keepMeta(oid: string, meta: StepMeta): void {
  metas.set(oid, meta)
  if (metas.size > METAS_KEPT) metas.delete(metas.keys().next().value as string)
}
