/**
 * The journal's reserve (holdfast.yaml `journal.reserve_bytes`): a file in each workspace's journal
 * directory, `<ws>/journal/.reserve` (no agent's name starts with a dot), holding room for the
 * answers of steps already sent when the disk fills. The writer gives it back a piece at a time,
 * just before it writes again an answer frame the full disk refused, so the answer the client gets
 * and its HEAD still land in the journal, and a stop or a crash before space returns loses
 * nothing; it is made whole again before the next step is recorded, and a step is refused while it
 * cannot be. Invariant: only a sent step's answer draws on it. Its bytes are random: a file system
 * that compresses or deduplicates would keep zeros in no room at all.
 */
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'

/** The errno a short write stands for (the disk filled): the system's code, not one of holdfast's. */
const NO_SPACE = 'ENOSPC'

/** The reserve's size when holdfast.yaml does not set `journal.reserve_bytes`. */
export const DEFAULT_RESERVE_BYTES = 4 * 1024 * 1024
/** The reserve's file name in a workspace's journal directory. */
export const RESERVE_FILE = '.reserve'
/** The reserve is given back in whole pieces of this many bytes (a few file system blocks). */
const PIECE = 64 * 1024
/** The most random bytes made for one write while the reserve is made whole. */
const FILL = 1024 * 1024

export class Reserve {
  /** What the file holds, once read. */
  private size: number | undefined
  constructor(
    readonly file: string,
    /** Its size when whole; 0: no reserve. */
    readonly bytes: number,
  ) {}

  /** Bytes the reserve holds now. */
  get held(): number {
    this.size ??= fs.statSync(this.file, { throwIfNoEntry: false })?.size ?? 0
    return this.size
  }

  /**
   * Make the reserve whole (nothing to do while it is). Throws when the disk has no room for it:
   * the part it could take is kept, and the rest is asked for again next time.
   */
  ensure(): void {
    if (this.bytes === 0 || this.held >= this.bytes) return
    fs.mkdirSync(path.dirname(this.file), { recursive: true })
    const fd = fs.openSync(this.file, 'a')
    try {
      let size = this.held
      while (size < this.bytes) {
        const piece = crypto.randomBytes(Math.min(FILL, this.bytes - size))
        const wrote = fs.writeSync(fd, piece)
        size = this.size = size + wrote
        if (wrote < piece.length)
          throw Object.assign(new Error(`the disk took ${wrote} of ${piece.length} bytes`), {
            code: NO_SPACE,
          })
      }
    } catch (err) {
      throw new Error(
        `the journal's reserve ${this.file} could not be made whole (it holds ${this.size} of ${this.bytes} bytes, kept for answers under way when the disk fills): ${(err as Error).message}`,
        { cause: err },
      )
    } finally {
      fs.closeSync(fd)
    }
  }

  /**
   * Give back room for a write of `want` bytes (in whole pieces, what is left when less): false,
   * giving nothing, when the reserve holds less than `want`.
   */
  release(want: number): boolean {
    const held = this.held
    if (this.bytes === 0 || want > held) return false
    const left = Math.max(0, held - Math.ceil(want / PIECE) * PIECE)
    fs.truncateSync(this.file, left)
    this.size = left
    return true
  }
}
