/**
 * Atomic file replacement: write a temp file beside the target, then rename it over the target.
 * Invariant: a reader sees the old bytes or the new bytes, never a mix, and a failed write leaves
 * no temp file behind. Parent directories are created. Empty data writes an empty file. Without
 * `fsync` (the sync writer's option) this survives a killed process, not a power cut.
 */
import { randomBytes } from 'node:crypto'
import {
  closeSync,
  fchmodSync,
  fsyncSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  writevSync,
} from 'node:fs'
import { mkdir, open, rename, rm } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'

/** A per-process random tag and a counter: unique temp names without a random draw per write. */
const TAG = `${process.pid}.${randomBytes(4).toString('hex')}`
let counter = 0

/**
 * The temp name for `target`: same directory, unique per process (and thread) and call; hidden,
 * or with `prefix` when a tool must recognise leftovers (git prunes `tmp_*` in its objects).
 */
function tempPathFor(target: string, prefix?: string): string {
  const name = prefix ? `${prefix}${TAG}.${++counter}` : `.${basename(target)}.${TAG}.${++counter}.tmp`
  return join(dirname(target), name)
}

/**
 * Replace `path` with `data` atomically. With `mode`, the file gets exactly that mode (umask
 * not applied); without, the mode a plain `writeFile` would give.
 */
export async function writeFileAtomic(path: string, data: Buffer | string, mode?: number): Promise<void> {
  await mkdir(dirname(path), { recursive: true })
  const temp = tempPathFor(path)
  try {
    const fh = await open(temp, 'wx', mode ?? 0o666)
    try {
      if (mode !== undefined) await fh.chmod(mode)
      await fh.writeFile(data)
    } finally {
      await fh.close()
    }
    await rename(temp, path)
  } catch (err) {
    await rm(temp, { force: true }).catch(() => undefined)
    throw err
  }
}

/**
 * The same, synchronously: for the commit worker, where blocking its own thread costs nothing.
 * `data` may be several buffers, written in order without being joined first. With `fsync`, the
 * file's bytes are on the disk before it takes the target's name (a power cut leaves the old file
 * or the whole new one); the directory entry is the caller's to flush (`fsyncDir`), once for all
 * the files it renames into one directory.
 */
export function writeFileAtomicSync(
  path: string,
  data: Buffer | string | readonly Buffer[],
  opts: { mode?: number; tempPrefix?: string; fsync?: boolean } = {},
): void {
  const temp = tempPathFor(path, opts.tempPrefix)
  try {
    const parts = Array.isArray(data) ? (data as readonly Buffer[]) : [Buffer.from(data as Buffer | string)]
    writeAllSync(temp, parts, opts.mode, opts.fsync === true)
    renameSync(temp, path)
  } catch (err) {
    rmSync(temp, { force: true })
    throw err
  }
}

/** Flush a directory's entries (a file renamed into it, a file removed) to the disk. */
export function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

/** Flush every file and directory under `dir` (and `dir` itself) to the disk: a tree just made. */
export function fsyncTree(dir: string): void {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name)
    if (e.isDirectory()) fsyncTree(p)
    else if (e.isFile()) {
      const fd = openSync(p, 'r')
      try {
        fsyncSync(fd)
      } finally {
        closeSync(fd)
      }
    }
  }
  fsyncDir(dir)
}

/**
 * Create `file` with `parts` in order (writev, as many calls as the kernel needs), flushed to the
 * disk when asked. The parts are walked by index: a pack is thousands of parts, and dropping each
 * written one by copying the rest of the array allocated heap per step (docs/architecture.md,
 * performance devices).
 */
function writeAllSync(file: string, parts: readonly Buffer[], mode: number | undefined, sync: boolean): void {
  const fd = openSync(file, 'wx', mode ?? 0o666)
  try {
    // An explicit mode is exact (the umask does not apply), as the async writer's chmod makes it.
    if (mode !== undefined) fchmodSync(fd, mode)
    const rest = parts.filter((p) => p.length > 0)
    let i = 0
    while (i < rest.length) {
      // writev takes at most IOV_MAX (1024) buffers at a time.
      let wrote = writevSync(fd, rest.slice(i, i + 1024))
      while (i < rest.length && wrote >= (rest[i] as Buffer).length) {
        wrote -= (rest[i] as Buffer).length
        i++
      }
      // A short write ends inside a part: its unwritten end goes first next time.
      if (wrote > 0) rest[i] = (rest[i] as Buffer).subarray(wrote)
    }
    if (sync) fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}
