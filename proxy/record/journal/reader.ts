/**
 * Reading the journal (recovery, the CLI, the commit worker): an agent's files frame by frame
 * (record/journal is the format and the writer). Invariant: a reader never drops what it cannot
 * read: past a torn or corrupt frame it resyncs on the next whole frame (legible header, payload
 * matching its CRC) and reads on, and every byte no whole frame accounts for is reported as damage
 * (where, how long, and the step its header names when that header is legible). Absent directories
 * read as no steps.
 */
import fs from 'node:fs'
import path from 'node:path'
import { parseStep } from '../../core/naming'
import {
  couldBeHeaderStart,
  type Extent,
  FRAME,
  type FrameType,
  HEADER_BYTES,
  payloadIntact,
  readHeader,
  type ResponseHead,
  type StepMeta,
  type StepPlace,
  LEGACY_VERSION,
  VERSION,
} from './format'

/**
 * The journal files of an agent directory in the order they were made (by first step, then the
 * `.k` a reused first step gets); [] when there are none.
 */
export function segmentFiles(dir: string): { file: string; first: number }[] {
  let names: string[]
  try {
    names = fs.readdirSync(dir)
  } catch (err) {
    // No directory, or a file in its place: no journal (writing one then fails, RECORD_WRITE_FAILED).
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') return []
    throw err
  }
  return names
    .map((name) => {
      const m = /^(\d+)(?:\.(\d+))?\.log$/.exec(name)
      const first = m ? parseStep(m[1] as string) : undefined
      return { name, first, k: Number(m?.[2] ?? 1) }
    })
    .filter((s): s is { name: string; first: number; k: number } => s.first !== undefined)
    .sort((a, b) => a.first - b.first || a.k - b.k)
    .map((s) => ({ file: path.join(dir, s.name), first: s.first }))
}

/** One step as the journal holds it. */
export interface JournalStep {
  n: number
  meta: StepMeta
  request: Buffer
  /** The exact bytes sent upstream, when the journal holds them beside the request (a WebSocket frame). */
  wire?: Buffer
  place: StepPlace
  /** The SENT frame was written: the request went upstream (or was about to). */
  sent: boolean
  /** The answer's bytes so far, as the provider sent them. */
  answer: Buffer
  /** The completion marker, when the answer is whole. */
  head: ResponseHead | undefined
  /** Some frame of this step's answer is damaged: its answer as read is not what came. */
  damaged?: Damage
}

/** Bytes of a journal file that no whole frame accounts for. */
export interface Damage {
  file: string
  offset: number
  length: number
  /** 'torn': the file's last frame, cut short (a write that never finished); 'corrupt': anything else. */
  kind: 'torn' | 'corrupt'
  /** What the region's first header names, when it is legible (the step is kept only when plausible). */
  step?: number
  type?: FrameType
}

/** An agent's journal as read: its steps by number, what could not be read, and each file's highest step. */
export interface JournalRead {
  steps: Map<number, JournalStep>
  damage: Damage[]
  /** The highest step number the journal gave out: any SEND, or a damaged frame's legible header. */
  highest: number
  /** Each file's highest step with a SEND frame. */
  lastIn: Map<string, number>
}

interface RawFrame {
  type: number
  step: number
  offset: number
  payload: Buffer
}

/**
 * The whole frames of a file, in order, and the damaged regions between them. After a bad frame
 * the reader looks for the next legible header whose payload matches its CRC, so one flipped byte
 * costs the frame it is in, not the rest of the file.
 */
export function scanFrames(file: string, data: Buffer): { frames: RawFrame[]; damage: Damage[] } {
  const frames: RawFrame[] = []
  const damage: Damage[] = []
  let at = 0
  while (at < data.length) {
    const h = readHeader(data, at)
    const start = at + HEADER_BYTES
    if (h && payloadIntact(data, h, start)) {
      frames.push({
        type: h.type,
        step: h.step,
        offset: start,
        payload: data.subarray(start, start + h.length),
      })
      at = start + h.length
      continue
    }
    const next = nextFrame(data, at + 1, h && start + h.length)
    const end = next ?? data.length
    // At the end of the file: a frame cut short, or zeros (a tail a power cut took before it was
    // flushed) is a write that never finished, not damage to what was written.
    const torn =
      next === undefined &&
      (h
        ? start + h.length > data.length
        : (data.length - at < HEADER_BYTES && couldBeHeaderStart(data, at)) || allZero(data, at))
    damage.push({
      file,
      offset: at,
      length: end - at,
      kind: torn ? 'torn' : 'corrupt',
      ...(h ? { step: h.step, type: h.type } : {}),
    })
    at = end
  }
  return { frames, damage }
}

/** Whether `data` holds only zeros from `from` to its end. */
function allZero(data: Buffer, from: number): boolean {
  for (let i = from; i < data.length; i++) if (data[i] !== 0) return false
  return true
}

/**
 * Where the next whole frame at or after `from` starts, if any. `likely` (where a legible but
 * damaged frame would end) is tried first: a flipped payload byte damages that frame alone.
 */
function nextFrame(data: Buffer, from: number, likely?: number): number | undefined {
  if (likely !== undefined && likely >= from && likely < data.length && wholeAt(data, likely)) return likely
  // A header's version byte and reserved zeros: the only positions worth checking a CRC at.
  let best: number | undefined
  for (const version of [VERSION, LEGACY_VERSION]) {
    const marker = Buffer.from([version, 0, 0])
    for (
      let i = data.indexOf(marker, from + 1);
      i !== -1 && (best === undefined || i - 1 < best);
      i = data.indexOf(marker, i + 1)
    ) {
      if (wholeAt(data, i - 1)) {
        best = i - 1
        break
      }
    }
  }
  return best
}

/** Whether a whole frame starts at `at`. */
function wholeAt(data: Buffer, at: number): boolean {
  const h = readHeader(data, at)
  return h !== undefined && payloadIntact(data, h, at + HEADER_BYTES)
}

/** A damaged header's step, when it lies near the steps the file's whole frames name (a flipped bit there names nonsense). */
function plausible(step: number | undefined, first: number, known: readonly number[]): boolean {
  if (step === undefined || step < 1) return false
  const hi = Math.max(first, ...known)
  return step >= first && step <= hi + 64
}

/** Every step of an agent's journal directory, by number, with what could not be read. */
export function readJournal(dir: string): JournalRead {
  const steps = new Map<number, JournalStep>()
  const answers = new Map<number, Buffer[]>()
  const damage: Damage[] = []
  const lastIn = new Map<string, number>()
  let highest = 0
  for (const { file, first } of segmentFiles(dir)) {
    const scanned = scanFrames(file, fs.readFileSync(file))
    const named = scanned.frames.map((f) => f.step)
    for (const d of scanned.damage) {
      if (!plausible(d.step, first, named)) {
        delete d.step
        delete d.type
      }
      damage.push(d)
      if (d.step !== undefined) highest = Math.max(highest, d.step)
    }
    for (const f of scanned.frames) {
      if (f.type === FRAME.SEND) {
        const s = sendStep(file, f)
        if (!s) {
          damage.push({
            file,
            offset: f.offset - HEADER_BYTES,
            length: HEADER_BYTES + f.payload.length,
            kind: 'corrupt',
            step: f.step,
            type: FRAME.SEND,
          })
          continue
        }
        steps.set(f.step, s)
        answers.set(f.step, [])
        highest = Math.max(highest, f.step)
        lastIn.set(file, Math.max(lastIn.get(file) ?? 0, f.step))
        continue
      }
      const s = steps.get(f.step)
      if (!s) continue
      if (f.type === FRAME.WIRE) {
        s.wire = Buffer.from(f.payload)
        s.place.wire = { offset: f.offset, length: f.payload.length }
      } else if (f.type === FRAME.SENT) s.sent = true
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
  // A damaged frame of a step's answer (not its SEND): that answer is not what came.
  for (const d of damage) {
    const s = d.step !== undefined && d.type !== FRAME.SEND ? steps.get(d.step) : undefined
    if (s) s.damaged = d
  }
  return { steps: new Map([...steps].sort((a, b) => a[0] - b[0])), damage, highest, lastIn }
}

/** A SEND frame as a step; undefined when its meta is not JSON (then it is damage, not a record). */
function sendStep(file: string, f: RawFrame): JournalStep | undefined {
  if (f.payload.length < 4) return undefined
  const metaLen = f.payload.readUInt32LE(0)
  if (4 + metaLen > f.payload.length) return undefined
  let meta: StepMeta
  try {
    meta = JSON.parse(f.payload.toString('utf8', 4, 4 + metaLen)) as StepMeta
  } catch {
    return undefined
  }
  const request = Buffer.from(f.payload.subarray(4 + metaLen))
  return {
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
  }
}

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
