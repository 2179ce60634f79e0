/**
 * Atomic file replacement: write a temp file beside the target, then rename it over the target.
 * Invariant: a reader sees the old bytes or the new bytes, never a mix, and a failed write leaves
 * no temp file behind. Parent directories are created. Empty data writes an empty file.
 * No fsync: this survives a killed process, not a power cut.
 */
import { randomBytes } from 'node:crypto'
import { closeSync, openSync, renameSync, rmSync, writevSync, writeFileSync } from 'node:fs'
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
 * `data` may be several buffers, written in order without being joined first.
 */
export function writeFileAtomicSync(
  path: string,
  data: Buffer | string | readonly Buffer[],
  opts: { mode?: number; tempPrefix?: string } = {},
): void {
  const temp = tempPathFor(path, opts.tempPrefix)
  try {
    if (Array.isArray(data)) writeAllSync(temp, data as readonly Buffer[], opts.mode)
    else
      writeFileSync(temp, data as Buffer | string, {
        flag: 'wx',
        ...(opts.mode !== undefined ? { mode: opts.mode } : {}),
      })
    renameSync(temp, path)
  } catch (err) {
    rmSync(temp, { force: true })
    throw err
  }
}

/**
 * Create `file` with `parts` in order (writev, as many calls as the kernel needs). The parts are
 * walked by index: a pack is thousands of parts, and dropping each written one by copying the rest
 * of the array (as this did) allocated 34 KB of heap per committed step at 32 steps a pack, 360 KB
 * at 320 (`HOLDFAST_BENCH_HEAP=1 node -r ./scripts/register.js bench/commit.ts 2000 32 320`).
 */
function writeAllSync(file: string, parts: readonly Buffer[], mode?: number): void {
  const fd = openSync(file, 'wx', mode ?? 0o666)
  try {
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
  } finally {
    closeSync(fd)
  }
}
