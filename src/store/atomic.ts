/**
 * Atomic file replacement: write a temp file beside the target, then rename it over the target.
 * Invariant: a reader sees the old bytes or the new bytes, never a mix, and a failed write leaves
 * no temp file behind. Parent directories are created. Empty data writes an empty file.
 * No fsync: this survives a killed process, not a power cut.
 */
import { randomBytes } from 'node:crypto'
import { renameSync, rmSync, writeFileSync } from 'node:fs'
import { mkdir, open, rename, rm } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'

/** A per-process random tag and a counter: unique temp names without a random draw per write. */
const TAG = `${process.pid}.${randomBytes(4).toString('hex')}`
let counter = 0

/** The temp name for `target`: hidden, same directory, unique per process (and thread) and call. */
function tempPathFor(target: string): string {
  return join(dirname(target), `.${basename(target)}.${TAG}.${++counter}.tmp`)
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

/** The same, synchronously: for the commit worker, where blocking its own thread costs nothing. */
export function writeFileAtomicSync(path: string, data: Buffer | string): void {
  const temp = tempPathFor(path)
  try {
    writeFileSync(temp, data, { flag: 'wx' })
    renameSync(temp, path)
  } catch (err) {
    rmSync(temp, { force: true })
    throw err
  }
}
