/**
 * The journal: each agent's records before they are committed, in append-only logs
 * `<home>/workspaces/<ws>/journal/<agent>/<NNN>.log` (NNN: the first step the file holds). A step
 * is a few frames: SEND (the send half of `meta.json` and the exact request bytes), SENT (just
 * before the request goes upstream), CHUNK (each piece of the answer, before the client gets it)
 * and HEAD (status, headers and size, before the client can know the answer is whole).
 * Invariant: a frame is one write of a 16-byte header (type, step, length, CRC-32 of the payload)
 * and its payload, appended; a torn or corrupt frame ends its file for every reader; a SEND frame
 * that reads back whole is a complete record, and nothing is sent before it is written. A file is
 * removed once every step in it is committed. Writes are synchronous: one `write` to an open file
 * costs less than a trip through the thread pool, and a chunk is in the file before the client has it.
 */
import fs from 'node:fs'
import path from 'node:path'
import zlib from 'node:zlib'
import type { StepMeta } from '../../generated/meta'
import { formatStep, parseStep } from '../core/naming'

export type { StepMeta }

export const FRAME = { SEND: 1, SENT: 2, CHUNK: 3, HEAD: 4 } as const
type FrameType = (typeof FRAME)[keyof typeof FRAME]
const HEADER_BYTES = 16
interface Frame {
  type: FrameType
  step: number
  payload: readonly Buffer[]
}
const VERSION = 1
/** A file past this size takes no new step (its steps' later frames still go to it). */
export const SEGMENT_BYTES = 8 * 1024 * 1024

/** Where some bytes are in a journal file. */
export interface Extent {
  offset: number
  length: number
}

/** What HEAD says: the answer is whole, with this status, headers and size. */
export interface ResponseHead {
  status: number
  headers: Record<string, string | string[] | undefined>
  trailers?: Record<string, string>
  bytes: number
  ttfb_ms: number | null
  total_ms: number
  ended_at: string
}

/** Where a step's parts are: the file, its send-half meta, the request, each chunk of the answer, and HEAD. */
export interface StepPlace {
  file: string
  meta: Extent
  request: Extent
  chunks: Extent[]
  head?: Extent
}

function header(type: FrameType, step: number, payload: readonly Buffer[]): Buffer {
  let length = 0
  let crc = 0
  for (const p of payload) {
    length += p.length
    crc = zlib.crc32(p, crc)
  }
  const h = Buffer.allocUnsafe(HEADER_BYTES)
  h.writeUInt8(type, 0)
  h.writeUInt8(VERSION, 1)
  h.writeUInt16LE(0, 2)
  h.writeUInt32LE(step, 4)
  h.writeUInt32LE(length, 8)
  h.writeUInt32LE(crc >>> 0, 12)
  return h
}

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
}

/** One agent's journal, written by the server: its files and where each step's frames went. */
export class AgentJournal {
  private segments: Segment[] = []
  private loaded = false

  constructor(
    readonly dir: string,
    private readonly files: OpenFiles,
    private readonly fsync: boolean,
  ) {}

  /** The files already there (a fresh start finds none: recovery removed them). */
  private load(): void {
    if (this.loaded) return
    this.loaded = true
    this.segments = segmentFiles(this.dir).map((s) => ({
      file: s.file,
      size: fs.statSync(s.file).size,
      last: s.first,
    }))
  }

  /** Append `frames` in one write; returns where each one's payload starts. */
  private append(seg: Segment, frames: readonly Frame[]): number[] {
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
    const wrote = fs.writevSync(fd, parts)
    // A short write leaves a torn frame: readers stop there, and so must we.
    if (wrote !== want) throw new Error(`the journal took ${wrote} of ${want} bytes in ${seg.file}`)
    seg.size += wrote
    if (this.fsync && frames.some((f) => f.type === FRAME.SEND || f.type === FRAME.HEAD)) fs.fdatasyncSync(fd)
    return offsets
  }

  /**
   * Write step `n`'s send half: the meta, then the request bytes, in one frame. Returns the entry
   * the step's later frames are written through.
   */
  send(n: number, meta: StepMeta, request: Buffer): JournalEntry {
    this.load()
    let seg = this.segments[this.segments.length - 1]
    if (!seg || seg.size >= SEGMENT_BYTES) {
      fs.mkdirSync(this.dir, { recursive: true })
      seg = { file: path.join(this.dir, `${formatStep(n)}.log`), size: 0, last: n }
      // Create it whole (an existing file of that name would be a step's number reused: refuse).
      fs.closeSync(fs.openSync(seg.file, 'wx'))
      this.segments.push(seg)
    }
    const metaBytes = Buffer.from(JSON.stringify(meta))
    const len = Buffer.allocUnsafe(4)
    len.writeUInt32LE(metaBytes.length, 0)
    const at = this.append(seg, [
      { type: FRAME.SEND, step: n, payload: [len, metaBytes, request] },
    ])[0] as number
    seg.last = Math.max(seg.last, n)
    const place: StepPlace = {
      file: seg.file,
      meta: { offset: at + 4, length: metaBytes.length },
      request: { offset: at + 4 + metaBytes.length, length: request.length },
      chunks: [],
    }
    return new JournalEntry(this, seg, n, place)
  }

  /** @internal for JournalEntry */
  write(seg: Segment, frames: readonly Frame[]): number[] {
    return this.append(seg, frames)
  }

  /** Every step up to `n` is committed: remove the files that hold only such steps (never the newest). */
  committed(n: number): void {
    this.load()
    while (this.segments.length > 1 && (this.segments[0] as Segment).last <= n) {
      const seg = this.segments.shift() as Segment
      this.files.close(seg.file)
      fs.rmSync(seg.file, { force: true })
    }
  }

  /** The steps still in the journal, ascending (numbering resumes after the highest). */
  steps(): number[] {
    this.load()
    return [...readJournal(this.dir).keys()]
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
    this.bytes += bytes.length
    const frames: Frame[] = [{ type: FRAME.CHUNK, step: this.n, payload: [bytes] }]
    const headBytes = head && this.headBytes(head)
    if (headBytes) frames.push({ type: FRAME.HEAD, step: this.n, payload: [headBytes] })
    const [offset, headAt] = this.journal.write(this.seg, frames) as [number, number?]
    this.place.chunks.push({ offset, length: bytes.length })
    if (headBytes && headAt !== undefined) this.place.head = { offset: headAt, length: headBytes.length }
  }

  /** The answer is whole: say so (flushed when asked) before the end reaches the client. */
  head(h: Omit<ResponseHead, 'bytes'>): void {
    const bytes = this.headBytes(h)
    const offset = this.journal.write(this.seg, [
      { type: FRAME.HEAD, step: this.n, payload: [bytes] },
    ])[0] as number
    this.place.head = { offset, length: bytes.length }
  }

  private headBytes(h: Omit<ResponseHead, 'bytes'>): Buffer {
    return Buffer.from(JSON.stringify({ ...h, bytes: this.bytes }))
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

  close(): void {
    this.files.closeAll()
  }
}

// ---- reading (recovery, the CLI, the commit worker) -------------------------------------------

/** The journal files of an agent directory, by their first step, ascending; [] when there are none. */
export function segmentFiles(dir: string): { file: string; first: number }[] {
  let names: string[]
  try {
    names = fs.readdirSync(dir)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw err
  }
  return names
    .map((name) => ({ name, first: name.endsWith('.log') ? parseStep(name.slice(0, -4)) : undefined }))
    .filter((s): s is { name: string; first: number } => s.first !== undefined)
    .sort((a, b) => a.first - b.first)
    .map((s) => ({ file: path.join(dir, s.name), first: s.first }))
}

/** One step as the journal holds it. */
export interface JournalStep {
  n: number
  meta: StepMeta
  request: Buffer
  place: StepPlace
  /** The SENT frame was written: the request went upstream (or was about to). */
  sent: boolean
  /** The answer's bytes so far, as the provider sent them. */
  answer: Buffer
  /** The completion marker, when the answer is whole. */
  head: ResponseHead | undefined
}

/** Every whole frame of a file, in order; it stops at the first torn or corrupt one. */
function* frames(file: string): Generator<{ type: number; step: number; offset: number; payload: Buffer }> {
  const data = fs.readFileSync(file)
  let at = 0
  while (at + HEADER_BYTES <= data.length) {
    const type = data.readUInt8(at)
    const step = data.readUInt32LE(at + 4)
    const length = data.readUInt32LE(at + 8)
    const crc = data.readUInt32LE(at + 12)
    const start = at + HEADER_BYTES
    if (data.readUInt8(at + 1) !== VERSION || start + length > data.length) return
    const payload = data.subarray(start, start + length)
    if (zlib.crc32(payload) >>> 0 !== crc) return
    yield { type, step, offset: start, payload }
    at = start + length
  }
}

/** Every step of an agent's journal directory, by number (a step whose SEND frame is torn is not there). */
export function readJournal(dir: string): Map<number, JournalStep> {
  const steps = new Map<number, JournalStep>()
  const answers = new Map<number, Buffer[]>()
  for (const { file } of segmentFiles(dir)) {
    for (const f of frames(file)) {
      if (f.type === FRAME.SEND) {
        const metaLen = f.payload.readUInt32LE(0)
        let meta: StepMeta
        try {
          meta = JSON.parse(f.payload.toString('utf8', 4, 4 + metaLen)) as StepMeta
        } catch {
          continue // a SEND frame whose meta is not JSON is no record
        }
        const request = Buffer.from(f.payload.subarray(4 + metaLen))
        steps.set(f.step, {
          n: f.step,
          meta,
          request,
          place: {
            file,
            meta: { offset: f.offset + 4, length: metaLen },
            request: { offset: f.offset + 4 + metaLen, length: request.length },
            chunks: [],
          },
          sent: false,
          answer: Buffer.alloc(0),
          head: undefined,
        })
        answers.set(f.step, [])
        continue
      }
      const s = steps.get(f.step)
      if (!s) continue
      if (f.type === FRAME.SENT) s.sent = true
      else if (f.type === FRAME.CHUNK) {
        answers.get(f.step)?.push(Buffer.from(f.payload))
        s.place.chunks.push({ offset: f.offset, length: f.payload.length })
      } else if (f.type === FRAME.HEAD) {
        try {
          s.head = JSON.parse(f.payload.toString('utf8')) as ResponseHead
          s.place.head = { offset: f.offset, length: f.payload.length }
        } catch {
          // an unreadable marker counts as none: the answer is treated as cut off
        }
      }
    }
  }
  for (const [n, parts] of answers) (steps.get(n) as JournalStep).answer = Buffer.concat(parts)
  return new Map([...steps].sort((a, b) => a[0] - b[0]))
}

/** The bytes of `extents` in `file`, joined (one read of the span they cover). */
export function readPlaced(file: string, extents: readonly Extent[]): Buffer {
  return readEach(file, [extents])[0] as Buffer
}

/**
 * Several `readPlaced` of one file through one open descriptor (a commit reads a request and its
 * answer; a finish the meta, the HEAD and the answer). A step's frames lie together in its agent's
 * journal, so when what the lists name is close (at most SPAN_SLACK of other bytes between), it is
 * all one read: three system calls a finish and two a commit were one each.
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

/** Agent names with a journal directory in this workspace. */
export function journalAgents(journalDir: string): string[] {
  try {
    return fs
      .readdirSync(journalDir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw err
  }
}

export const REQUEST_FILE = 'request.json'
export const META_FILE = 'meta.json'
export const RESPONSE_FILES = ['response.json', 'response.sse', 'response.txt'] as const
export type ResponseFile = (typeof RESPONSE_FILES)[number]

export function metaBytes(meta: StepMeta): Buffer {
  return Buffer.from(JSON.stringify(meta, null, 2) + '\n')
}
