/**
 * The journal writer's open files (record/journal/writer), at most `max` at once: the least
 * recently used idle one is closed when another opens. Invariant: one descriptor per file, opened
 * to append.
 */
import fs from 'node:fs'

export class OpenFiles {
  private readonly open = new Map<string, number>()
  constructor(private readonly max = 128) {}

  fd(file: string): number {
    let fd = this.open.get(file)
    if (fd !== undefined) {
      this.open.delete(file) // most recent last
      this.open.set(file, fd)
      return fd
    }
    fd = fs.openSync(file, 'a')
    this.open.set(file, fd)
    for (const [f, old] of this.open) {
      if (this.open.size <= this.max) break
      this.open.delete(f)
      fs.closeSync(old)
    }
    return fd
  }

  close(file: string): void {
    const fd = this.open.get(file)
    if (fd === undefined) return
    this.open.delete(file)
    fs.closeSync(fd)
  }

  closeAll(): void {
    for (const fd of this.open.values()) fs.closeSync(fd)
    this.open.clear()
  }
}
