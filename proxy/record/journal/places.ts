/**
 * Reading a journal file's bytes at known places (a step's request, its answer's chunks, its
 * HEAD): where the writer or the reader said they are. Invariant: one open descriptor per call,
 * and what lies close together is one read; a file shorter than its places is an error, never
 * short bytes. No extents read as no bytes.
 */
import fs from 'node:fs'
import type { Extent } from './format'

/** The bytes of `extents` in `file`, joined (one read of the span they cover). */
export function readPlaced(file: string, extents: readonly Extent[]): Buffer {
  return readEach(file, [extents])[0] as Buffer
}

/**
 * Several `readPlaced` of one file through one open descriptor (a commit reads a request and its
 * answer; a finish the meta, the HEAD and the answer). A step's frames lie together in its agent's
 * journal, so when what the lists name is close (at most SPAN_SLACK of other bytes between), it is
 * all one read.
 */
export function readEach(file: string, lists: readonly (readonly Extent[])[]): Buffer[] {
  const fd = fs.openSync(file, 'r')
  try {
    const all = span(lists.flat())
    if (lists.length > 1 && all.to - all.from <= all.wanted + SPAN_SLACK) {
      const bytes = readRange(fd, file, all)
      return lists.map((extents) => pick(bytes, all.from, extents))
    }
    return lists.map((extents) => {
      const one = span(extents)
      return pick(readRange(fd, file, one), one.from, extents)
    })
  } finally {
    fs.closeSync(fd)
  }
}

/** Where `extents` begin and end in their file, and how many bytes they hold. */
function span(extents: readonly Extent[]): { from: number; to: number; wanted: number } {
  let from = extents.length > 0 ? Infinity : 0
  let to = 0
  let wanted = 0
  for (const e of extents) {
    from = Math.min(from, e.offset)
    to = Math.max(to, e.offset + e.length)
    wanted += e.length
  }
  return { from, to, wanted }
}

/** Bytes of other frames one read of several lists may carry along (frame headers, another step's). */
const SPAN_SLACK = 64 * 1024

/** Bytes `from` to `to` of `file`. */
function readRange(fd: number, file: string, { from, to }: { from: number; to: number }): Buffer {
  const bytes = Buffer.allocUnsafe(to - from)
  let got = 0
  while (got < bytes.length) {
    const n = fs.readSync(fd, bytes, got, bytes.length - got, from + got)
    if (n === 0) throw new Error(`the journal file ${file} ends before its frames do`)
    got += n
  }
  return bytes
}

/** `extents` out of `bytes` (which start at file offset `base`): one is a view, several are joined. */
function pick(bytes: Buffer, base: number, extents: readonly Extent[]): Buffer {
  const views = extents.map((e) => bytes.subarray(e.offset - base, e.offset - base + e.length))
  return views.length === 1 ? (views[0] as Buffer) : Buffer.concat(views)
}
