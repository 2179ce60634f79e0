/**
 * The journal: each agent's records before they are committed, in append-only logs
 * `<home>/workspaces/<ws>/journal/<agent>/<NNN>.log` (NNN: the first step the file holds). A step
 * is a few frames: SEND (the send half of `meta.json` and the request bytes; WIRE beside it when
 * the bytes sent upstream are not those, a WebSocket frame's), SENT (just
 * before the request goes upstream), CHUNK (each piece of the answer, before the client gets it)
 * and HEAD (status, headers and size, before the client can know the answer is whole). This module
 * is the frame format and the writer; record/journal/reader the reader.
 * Invariant: a frame is one write of a 16-byte header (type, version, step, length, CRC-32 of the
 * payload) and its payload, appended; a write the disk takes only in part is cut off again before
 * anything else is appended (or, when it cannot be, its file takes nothing more), so the frames
 * after a failed write sit where the writer says they do. Nothing is sent before its SEND frame is
 * written. Writes are synchronous: one `write` to an open file costs less than a trip through the
 * thread pool, and a chunk is in the file before the client has it.
 */
import fs from 'node:fs'
import path from 'node:path'
import { formatStep } from '../../core/naming'
import { fsyncDir } from '../../store/atomic'
import {
  FRAME,
  type Frame,
  header,
  HEADER_BYTES,
  type ResponseHead,
  SEGMENT_BYTES,
  type StepMeta,
  type StepPlace,
} from './format'
import { readJournal, segmentFiles } from './reader'

/** The open files of the journal, at most `max` at once (the least recently used idle one is closed). */
class OpenFiles {
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

interface Segment {
  file: string
  size: number
  /** The highest step with a SEND frame here. */
  last: number
  /**
   * Set when the file takes no new frame: it was there before this writer (a crash may have left
   * a torn tail), or a failed write could not be cut off again. Its steps' later frames fail.
   */
  closed?: Error
}

/** The errno a short write is reported with: the disk is full. */
const SHORT_WRITE = 'ENOSPC'

/** The error a write into a closed segment gets: the first failure, or why the file was closed. */
const closedSegment = (file: string): Error =>
  new Error(`the journal file ${file} was there before this start and takes no new frames`)

/** One agent's journal, written by the server: its files and where each step's frames went. */
export class AgentJournal {
  private segments: Segment[] = []
  private loaded = false

  constructor(
    readonly dir: string,
    private readonly files: OpenFiles,
    private readonly fsync: boolean,
  ) {}

  /**
   * The files already there (steps recovery could not commit yet, or the agent's latest step):
   * read-only for this writer, whose first step opens a file of its own.
   */
  private load(): void {
    if (this.loaded) return
    this.loaded = true
    const read = readJournal(this.dir)
    this.segments = segmentFiles(this.dir).map((s) => ({
      file: s.file,
      size: fs.statSync(s.file).size,
      last: read.lastIn.get(s.file) ?? s.first,
      closed: closedSegment(s.file),
    }))
  }

  /**
   * Append `frames` in one write; returns where each one's payload starts. A write the disk took
   * only in part is cut off again (the file keeps its last whole frame) before this throws; when
   * it cannot be cut off, the file is closed to new frames (new steps open a new file).
   */
  private append(seg: Segment, frames: readonly Frame[]): number[] {
    if (seg.closed) throw seg.closed
    const fd = this.files.fd(seg.file)
    const parts: Buffer[] = []
    const offsets: number[] = []
    let at = seg.size
    for (const f of frames) {
      const h = header(f.type, f.step, f.payload)
      offsets.push(at + HEADER_BYTES)
      at += HEADER_BYTES + h.readUInt32LE(8)
      parts.push(h, ...f.payload)
    }
    const want = at - seg.size
    try {
      const wrote = fs.writevSync(fd, parts)
      // A short write is what a disk that filled mid-write gives: it counts as one (store/faults).
      if (wrote !== want)
        throw Object.assign(new Error(`the journal took ${wrote} of ${want} bytes in ${seg.file}`), {
          code: SHORT_WRITE,
        })
      // A frame the record's meaning rests on is on the disk before what it vouches for happens:
      // SEND before the send, SENT before the request leaves, HEAD before the client has the end.
      if (this.fsync && frames.some((f) => f.type !== FRAME.CHUNK)) fs.fdatasyncSync(fd)
    } catch (err) {
      this.cutBack(seg, fd, err as Error)
      throw err
    }
    seg.size = at
    return offsets
  }

  /** After a failed write: the file back to its last whole frame, or closed to new frames. */
  private cutBack(seg: Segment, fd: number, cause: Error): void {
    try {
      fs.ftruncateSync(fd, seg.size)
    } catch (err) {
      seg.closed = new Error(
        `the journal file ${seg.file} could not be cut back after a failed write (${(err as Error).message}); it takes no new frames`,
        { cause },
      )
      this.files.close(seg.file)
    }
  }

  /** The file a new step goes to: the newest, unless it is closed or full; else a new one. */
  private segmentFor(n: number): Segment {
    const last = this.segments[this.segments.length - 1]
    if (last && !last.closed && last.size < SEGMENT_BYTES) return last
    const madeDir = fs.mkdirSync(this.dir, { recursive: true })
    // A name never used before in this directory (a closed file may carry this step's number).
    let file = path.join(this.dir, `${formatStep(n)}.log`)
    for (let k = 2; this.segments.some((s) => s.file === file) || fs.existsSync(file); k++)
      file = path.join(this.dir, `${formatStep(n)}.${k}.log`)
    // Created whole and exclusively: an existing file of that name is never appended to.
    fs.closeSync(fs.openSync(file, 'wx'))
    // Flushed records need their file to be found after a power cut: its directory entry too.
    if (this.fsync) {
      fsyncDir(this.dir)
      if (madeDir !== undefined) fsyncDir(path.dirname(this.dir))
    }
    const seg: Segment = { file, size: 0, last: n }
    this.segments.push(seg)
    return seg
  }

  /**
   * Write step `n`'s send half: the meta, then the request bytes, in one frame (and the bytes sent
   * upstream, `wire`, when they differ, in the same write). Returns the entry the step's later
   * frames are written through.
   */
  send(n: number, meta: StepMeta, request: Buffer, wire?: Buffer): JournalEntry {
    this.load()
    const seg = this.segmentFor(n)
    const metaBytes = Buffer.from(JSON.stringify(meta))
    const len = Buffer.allocUnsafe(4)
    len.writeUInt32LE(metaBytes.length, 0)
    const frames: Frame[] = [{ type: FRAME.SEND, step: n, payload: [len, metaBytes, request] }]
    // In the same write: the step is recorded with both, or not at all.
    if (wire) frames.push({ type: FRAME.WIRE, step: n, payload: [wire] })
    const [at, wireAt] = this.append(seg, frames) as [number, number?]
    seg.last = Math.max(seg.last, n)
    const place: StepPlace = {
      file: seg.file,
      meta: { offset: at + 4, length: metaBytes.length },
      request: { offset: at + 4 + metaBytes.length, length: request.length },
      ...(wire && wireAt !== undefined ? { wire: { offset: wireAt, length: wire.length } } : {}),
      chunks: [],
    }
    return new JournalEntry(this, seg, n, place)
  }

  /** @internal for JournalEntry */
  write(seg: Segment, frames: readonly Frame[]): number[] {
    return this.append(seg, frames)
  }

  /**
   * Every step up to `n` is committed: remove the files that hold only such steps. The newest is
   * kept while the agent is active (`idle` false): with `journal.fsync` off, a power cut that takes
   * the newest commits off the disk finds their steps there (the window it saves:
   * docs/reliability.md, "A power loss, journal.fsync: false"). An idle agent keeps no file.
   */
  committed(n: number, idle = false): void {
    this.load()
    const keep = idle ? 0 : 1
    while (this.segments.length > keep && (this.segments[0] as Segment).last <= n) {
      const seg = this.segments.shift() as Segment
      this.files.close(seg.file)
      fs.rmSync(seg.file, { force: true })
    }
  }
}

/** One step's frames after SEND: SENT, each CHUNK, HEAD. Where they went is in `place`. */
export class JournalEntry {
  bytes = 0
  constructor(
    private readonly journal: AgentJournal,
    private readonly seg: Segment,
    readonly n: number,
    readonly place: StepPlace,
  ) {}

  /** Just before the request goes upstream: a step without this frame was never sent. */
  sent(): void {
    this.journal.write(this.seg, [{ type: FRAME.SENT, step: this.n, payload: [] }])
  }

  /**
   * A piece of the answer; with `head`, the answer is whole with it, and its HEAD goes in the same
   * write (a JSON answer of declared length is usually one piece: one write instead of two).
   */
  chunk(bytes: Buffer, head?: Omit<ResponseHead, 'bytes'>): void {
    const headBytes = head && this.headBytes(head, this.bytes + bytes.length)
    const frames: Frame[] = [{ type: FRAME.CHUNK, step: this.n, payload: [bytes] }]
    if (headBytes) frames.push({ type: FRAME.HEAD, step: this.n, payload: [headBytes] })
    const [offset, headAt] = this.journal.write(this.seg, frames) as [number, number?]
    this.bytes += bytes.length
    this.place.chunks.push({ offset, length: bytes.length })
    if (headBytes && headAt !== undefined) this.place.head = { offset: headAt, length: headBytes.length }
  }

  /** The answer is whole: say so (flushed when asked) before the end reaches the client. */
  head(h: Omit<ResponseHead, 'bytes'>): void {
    const bytes = this.headBytes(h, this.bytes)
    const offset = this.journal.write(this.seg, [
      { type: FRAME.HEAD, step: this.n, payload: [bytes] },
    ])[0] as number
    this.place.head = { offset, length: bytes.length }
  }

  private headBytes(h: Omit<ResponseHead, 'bytes'>, bytes: number): Buffer {
    return Buffer.from(JSON.stringify({ ...h, bytes }))
  }
}

/** The server's journal: one AgentJournal per agent directory, sharing the open files. */
export class Journal {
  private readonly files = new OpenFiles()
  private readonly agents = new Map<string, AgentJournal>()
  constructor(private readonly fsync: boolean) {}

  agent(dir: string): AgentJournal {
    let a = this.agents.get(dir)
    if (!a) this.agents.set(dir, (a = new AgentJournal(dir, this.files, this.fsync)))
    return a
  }

  /**
   * Forget an idle agent's journal (its files are closed; a later step loads it again), removing
   * the files that hold only steps up to `committed` (all of them once everything is committed).
   */
  forget(dir: string, committed: number): void {
    this.agent(dir).committed(committed, true)
    this.agents.delete(dir)
    for (const file of segmentFiles(dir)) this.files.close(file.file)
  }

  close(): void {
    this.files.closeAll()
  }
}
