/**
 * Refs of a bare repository, read and moved as git does it, so git can run beside us: a loose
 * `<gitdir>/<ref>` wins over its `packed-refs` line. Invariant: a ref moves only by compare-and-swap
 * under git's own `<ref>.lock` (create exclusively, write, check the old value, rename).
 * Absent refs read as undefined; a prefix with no refs lists []. Reads and the swap itself are
 * synchronous: a ref is 41 bytes, and each trip through the thread pool cost more CPU than the
 * read (the commit worker moves one ref per agent per batch; docs/performance.md).
 * Waiting out a held lock never blocks.
 */
import fs, { promises as fsp } from 'node:fs'
import * as path from 'node:path'
import { isRefComponent } from '../../core/naming'
import type { Repo } from './repo'
import { fsyncDir } from '../atomic'
import { appendReflog } from './reflog'

const OID = /^[0-9a-f]{40}$/

/** The ref did not hold the expected value; nothing was written. */
export class RefConflict extends Error {
  constructor(
    readonly ref: string,
    readonly expected: string | null,
    readonly actual: string | null,
  ) {
    super(`ref ${ref} moved: expected ${expected ?? '(absent)'}, found ${actual ?? '(absent)'}`)
    this.name = 'RefConflict'
  }
}

/** Someone else held `<ref>.lock` through all our retries; the lock was left alone. */
export class RefLocked extends Error {
  constructor(
    readonly ref: string,
    readonly lockFile: string,
  ) {
    super(
      `ref ${ref} is locked by another writer: ${lockFile} exists (remove it if no git process is running)`,
    )
    this.name = 'RefLocked'
  }
}

/** Throws unless `ref` is `refs/…` made of valid ref components: a ref name never escapes gitdir. */
export function assertRefName(ref: string): void {
  const parts = ref.split('/')
  if (parts[0] !== 'refs' || parts.length < 2 || !parts.slice(1).every(isRefComponent)) {
    throw new Error(`${JSON.stringify(ref)} is not a usable ref name (refs/<component>/…)`)
  }
}

function assertOid(oid: string, what: string): void {
  if (!OID.test(oid)) throw new Error(`${what} ${JSON.stringify(oid)} is not a full object id`)
}

function errCode(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException).code
}

function readText(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8')
  } catch (err) {
    const code = errCode(err)
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR') return undefined
    throw err
  }
}

/** `packed-refs` text as ref → oid (comment and `^` peel lines skipped). */
export function parsePackedRefs(text: string | undefined): Map<string, string> {
  const refs = new Map<string, string>()
  for (const line of text?.split('\n') ?? []) {
    if (line === '' || line.startsWith('#') || line.startsWith('^')) continue
    const space = line.indexOf(' ')
    const oid = line.slice(0, space)
    if (space === 40 && OID.test(oid)) refs.set(line.slice(space + 1).trimEnd(), oid)
  }
  return refs
}

/** `packed-refs` as ref → oid; empty when absent. */
function readPackedRefs(gitdir: string): Map<string, string> {
  return parsePackedRefs(readText(path.join(gitdir, 'packed-refs')))
}

function parseLoose(ref: string, text: string): string {
  const value = text.trim()
  if (!OID.test(value))
    throw new Error(`ref ${ref} does not hold an object id (symbolic refs other than HEAD are not followed)`)
  return value
}

/** Loose first, then packed-refs (in that order: `git pack-refs` writes packed before it deletes loose). */
function readRefRaw(gitdir: string, ref: string): string | undefined {
  const loose = readText(path.join(gitdir, ref))
  if (loose !== undefined) return parseLoose(ref, loose)
  return readPackedRefs(gitdir).get(ref)
}

/** The ref HEAD points at (`refs/heads/config/default`), or undefined when HEAD is detached or absent. */
export async function readHeadTarget(repo: Repo): Promise<string | undefined> {
  const text = readText(path.join(repo.gitdir, 'HEAD'))
  const m = /^ref: (\S+)\s*$/.exec(text ?? '')
  return m?.[1]
}

/** The oid a ref holds (`HEAD` is followed once), or undefined when it does not exist. */
export async function readRef(repo: Repo, ref: string): Promise<string | undefined> {
  if (ref === 'HEAD') {
    const target = await readHeadTarget(repo)
    if (target !== undefined) return readRef(repo, target)
    const text = readText(path.join(repo.gitdir, 'HEAD'))
    return text === undefined ? undefined : parseLoose('HEAD', text)
  }
  assertRefName(ref)
  return readRefRaw(repo.gitdir, ref)
}

async function walk(dir: string, rel: string, out: string[]): Promise<void> {
  let entries
  try {
    entries = await fsp.readdir(dir, { withFileTypes: true })
  } catch (err) {
    if (errCode(err) === 'ENOENT' || errCode(err) === 'ENOTDIR') return
    throw err
  }
  for (const e of entries) {
    if (e.isDirectory()) await walk(path.join(dir, e.name), `${rel}${e.name}/`, out)
    else out.push(`${rel}${e.name}`)
  }
}

/** Every ref whose name starts with `prefix` (`refs/heads/config/`), loose over packed, sorted by name. */
export async function listRefs(repo: Repo, prefix: string): Promise<{ ref: string; oid: string }[]> {
  if (!prefix.startsWith('refs/') || prefix.split('/').includes('..')) {
    throw new Error(`${JSON.stringify(prefix)} is not a ref prefix (refs/…)`)
  }
  const base = prefix.slice(0, prefix.lastIndexOf('/') + 1)
  const names: string[] = []
  await walk(path.join(repo.gitdir, base), base, names)
  const found = new Map<string, string>()
  const loose = new Set<string>() // read as loose files; a file gone meanwhile was packed first
  for (const ref of names) {
    if (!ref.startsWith(prefix) || ref.endsWith('.lock')) continue
    const value = readText(path.join(repo.gitdir, ref))?.trim()
    if (value !== undefined) loose.add(ref)
    if (value !== undefined && OID.test(value)) found.set(ref, value)
  }
  for (const [ref, oid] of readPackedRefs(repo.gitdir)) {
    if (ref.startsWith(prefix) && !loose.has(ref)) found.set(ref, oid)
  }
  return [...found].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([ref, oid]) => ({ ref, oid }))
}

export interface CasOptions {
  /** Further attempts at taking a held lock (default 6, backoff 2, 4, 8 … ms: about 130 ms in all). */
  retries?: number
  backoffMs?: number
  /** The new value and the ref's directory entry are on the disk before this returns. */
  durable?: boolean
  /** The message of the reflog line this move appends (`logs/<ref>`, as git writes it); none: no line. */
  reflog?: string
}

/**
 * Move `ref` to `newOid` if it now holds `expectedOld` (null: only if it does not exist).
 * Throws RefLocked when `<ref>.lock` stays held by someone else, RefConflict on a mismatch.
 */
export async function casRef(
  repo: Repo,
  ref: string,
  newOid: string,
  expectedOld: string | null,
  options: CasOptions = {},
): Promise<void> {
  assertRefName(ref)
  assertOid(newOid, 'new value')
  if (expectedOld !== null) assertOid(expectedOld, 'expected value')
  const file = path.join(repo.gitdir, ref)
  const lockFile = `${file}.lock`
  const retries = options.retries ?? 6
  const backoff = options.backoffMs ?? 2
  // The ref's directory is made only when missing (a first ref there, or `git pack-refs` pruned it).
  const takeLock = (): number => {
    try {
      return fs.openSync(lockFile, 'wx')
    } catch (err) {
      if (errCode(err) !== 'ENOENT') throw err
    }
    fs.mkdirSync(path.dirname(file), { recursive: true })
    return fs.openSync(lockFile, 'wx')
  }
  let fd
  for (let attempt = 0; fd === undefined; attempt++) {
    try {
      fd = takeLock()
    } catch (err) {
      if (errCode(err) !== 'EEXIST') throw err
      if (attempt >= retries) throw new RefLocked(ref, lockFile)
      await new Promise((resolve) => setTimeout(resolve, backoff * 2 ** attempt * (0.5 + Math.random())))
    }
  }
  let done = false
  try {
    try {
      fs.writeSync(fd, `${newOid}\n`)
      if (options.durable) fs.fsyncSync(fd)
    } finally {
      fs.closeSync(fd)
    }
    const actual = readRefRaw(repo.gitdir, ref) ?? null
    if (actual !== expectedOld) throw new RefConflict(ref, expectedOld, actual)
    fs.renameSync(lockFile, file)
    done = true
  } finally {
    if (!done) fs.rmSync(lockFile, { force: true })
  }
  if (options.durable) fsyncDir(path.dirname(file))
  if (options.reflog !== undefined)
    appendReflog(repo.gitdir, ref, expectedOld, newOid, options.reflog, { durable: options.durable })
}

/**
 * Remove `*.lock` files under `refs/heads/<prefix>` left by a crashed writer (call only while
 * holding the home lock, before any writer starts). Returns the removed files.
 */
export async function clearStaleLocks(gitdir: string, prefix: string): Promise<string[]> {
  const parts = prefix.split('/').filter((p) => p !== '')
  if (!parts.every(isRefComponent)) throw new Error(`${JSON.stringify(prefix)} is not a usable ref prefix`)
  const dir = path.join(gitdir, 'refs', 'heads', ...parts)
  const files: string[] = []
  await walk(dir, '', files)
  const removed: string[] = []
  for (const rel of files.filter((f) => f.endsWith('.lock'))) {
    const file = path.join(dir, rel)
    await fsp.rm(file, { force: true })
    removed.push(file)
  }
  return removed
}

/**
 * Delete `ref` if it now holds `expected` (git's way: under `<ref>.lock`; a `packed-refs` line is
 * removed under `packed-refs.lock`). Throws RefConflict on a mismatch, RefLocked when held.
 */
export async function deleteRef(repo: Repo, ref: string, expected: string): Promise<void> {
  assertRefName(ref)
  const file = path.join(repo.gitdir, ref)
  const lockFile = `${file}.lock`
  // The ref's directory is gone when `git pack-refs` pruned it: the lock needs it back.
  fs.mkdirSync(path.dirname(file), { recursive: true })
  try {
    fs.closeSync(fs.openSync(lockFile, 'wx'))
  } catch (err) {
    if (errCode(err) === 'EEXIST') throw new RefLocked(ref, lockFile)
    throw err
  }
  try {
    const actual = readRefRaw(repo.gitdir, ref) ?? null
    if (actual !== expected) throw new RefConflict(ref, expected, actual)
    fs.rmSync(file, { force: true })
    const packed = path.join(repo.gitdir, 'packed-refs')
    const text = readText(packed)
    if (text !== undefined && parsePackedRefs(text).has(ref)) {
      const lines = text.split('\n')
      const kept: string[] = []
      for (let i = 0; i < lines.length; i++) {
        const line = lines[i] as string
        if (line.endsWith(` ${ref}`)) {
          if (lines[i + 1]?.startsWith('^')) i++ // its peeled line goes with it
          continue
        }
        kept.push(line)
      }
      const packedLock = `${packed}.lock`
      fs.writeFileSync(packedLock, kept.join('\n'), { flag: 'wx' })
      fs.renameSync(packedLock, packed)
    }
  } finally {
    fs.rmSync(lockFile, { force: true })
  }
}
