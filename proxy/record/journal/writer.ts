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
  SEGMENT_BYTES,
  type StepMeta,
  type StepPlace,
} from './format'
import { JournalEntry } from './entry'
import { OpenFiles } from './open-files'
import { readJournal, segmentFiles } from './reader'
import { Reserve, RESERVE_FILE } from './reserve'

export { JournalEntry } from './entry'

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

/** Whether `err` says the disk (or the user's quota) has no room. */
const isNoRoom = (err: unknown): boolean => {
  const code = (err as NodeJS.ErrnoException).code
  return code === 'ENOSPC' || code === 'EDQUOT'
}

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
    /** The workspace's reserve, drawn on by a sent step's answer when the disk is full. */
    private readonly reserve: Reserve,
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
   * it cannot be cut off, the file is closed to new frames (new steps open a new file). A sent
   * step's answer (`answer`) the full disk refused is written again once, into room the reserve
   * gives back.
   */
  private append(seg: Segment, frames: readonly Frame[], answer = false): number[] {
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
      this.writeAll(seg, fd, parts, want, frames)
    } catch (err) {
      this.cutBack(seg, fd, err as Error)
      if (!answer || seg.closed || !isNoRoom(err) || !this.releases(want)) throw err
      try {
        this.writeAll(seg, fd, parts, want, frames)
      } catch (again) {
        this.cutBack(seg, fd, again as Error)
        throw again
      }
    }
    seg.size = at
    return offsets
  }

  /** One write of `parts` (`want` bytes) at the end of `seg`; a short write throws, as a full disk's. */
  private writeAll(seg: Segment, fd: number, parts: Buffer[], want: number, frames: readonly Frame[]): void {
    const wrote = fs.writevSync(fd, parts)
    // A short write is what a disk that filled mid-write gives: it counts as one (store/faults).
    if (wrote !== want)
      throw Object.assign(new Error(`the journal took ${wrote} of ${want} bytes in ${seg.file}`), {
        code: SHORT_WRITE,
      })
    // A frame the record's meaning rests on is on the disk before what it vouches for happens:
    // SEND before the send, SENT before the request leaves, HEAD before the client has the end.
    if (this.fsync && frames.some((f) => f.type !== FRAME.CHUNK)) fs.fdatasyncSync(fd)
  }

  /** Whether the reserve gave back room for `want` bytes (it cannot when it holds less, or is not there). */
  private releases(want: number): boolean {
    try {
      return this.reserve.release(want)
    } catch {
      return false
    }
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
    // A step goes only with the whole reserve behind its answer (it throws when the disk has no room).
    this.reserve.ensure()
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
    return new JournalEntry((frames, answer) => this.append(seg, frames, answer), n, place)
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

/**
 * The server's journal: one AgentJournal per agent directory, sharing the open files, and one
 * reserve per workspace journal directory (the agents' directories' parent).
 */
export class Journal {
  private readonly files = new OpenFiles()
  private readonly agents = new Map<string, AgentJournal>()
  private readonly reserves = new Map<string, Reserve>()
  constructor(
    private readonly fsync: boolean,
    /** holdfast.yaml `journal.reserve_bytes` (0: none). */
    private readonly reserveBytes = 0,
  ) {}

  agent(dir: string): AgentJournal {
    let a = this.agents.get(dir)
    if (!a) this.agents.set(dir, (a = new AgentJournal(dir, this.files, this.fsync, this.reserveOf(dir))))
    return a
  }

  /** The reserve of the workspace whose journal holds agent directory `dir`. */
  private reserveOf(dir: string): Reserve {
    const parent = path.dirname(dir)
    let r = this.reserves.get(parent)
    if (!r) this.reserves.set(parent, (r = new Reserve(path.join(parent, RESERVE_FILE), this.reserveBytes)))
    return r
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
