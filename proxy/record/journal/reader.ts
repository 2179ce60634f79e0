/**
 * Reading the journal (recovery, the CLI, the commit worker): an agent's files frame by frame
 * (journal/format the format, journal/writer the writer, journal/scan the frames of one file,
 * journal/places the bytes at known places). Invariant: a reader never drops what it cannot
 * read: past a torn or corrupt frame it resyncs on the next whole frame (legible header, payload
 * matching its CRC) and reads on, and every byte no whole frame accounts for is reported as damage
 * (where, how long, and the step its header names when that header is legible); whole frames of a
 * step whose send half is damaged are reported too ('unclaimed'), never dropped; a HEAD a torn last
 * write cut short still counts when its whole properties say the answer is whole (journal/salvage);
 * and the numbers lost bytes may have held count as given out. Absent directories read as no steps.
 */
import fs from 'node:fs'
import path from 'node:path'
import { parseStep } from '../../core/naming'
import {
  FRAME,
  type FrameType,
  HEADER_BYTES,
  type ResponseHead,
  type StepMeta,
  type StepPlace,
} from './format'
import { MIN_SEND_BYTES, numbersIn, repairHead, wholeByHead } from './salvage'
import { type Damage, type RawFrame, scanFrames } from './scan'

export { readEach, readPlaced } from './places'
export { type Damage, scanFrames } from './scan'

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
  /** The completion marker, when the answer is whole (a torn one's whole properties, when they say so). */
  head: ResponseHead | undefined
  /** Some frame of this step's answer is damaged: its answer as read is not what came. */
  damaged?: Damage
}

/** Numbers the journal may have given out in bytes it lost (a zeroed or cut tail, an empty file): never given again. */
export interface Unrecorded {
  file: string
  from: number
  to: number
}

/** An agent's journal as read: its steps by number, what could not be read, and each file's highest step. */
export interface JournalRead {
  steps: Map<number, JournalStep>
  /** Bytes no whole frame accounts for, and whole frames of a step whose send half is not there ('unclaimed'). */
  damage: Damage[]
  /** The highest step number the journal gave out: any SEND, a damaged frame's legible header, a file's name, what a lost tail could hold. */
  highest: number
  /** Each file's highest step with a SEND frame. */
  lastIn: Map<string, number>
  /** Numbers with no record that lost bytes may have held. */
  unrecorded: Unrecorded[]
}

/** A damaged header's step, when it lies near the steps the file's whole frames name (a flipped bit there names nonsense). */
function plausible(step: number | undefined, first: number, known: readonly number[]): boolean {
  if (step === undefined || step < 1) return false
  const hi = Math.max(first, ...known)
  return step >= first && step <= hi + 64
}

/** A file's end no whole frame accounts for, and the SEND before it. */
interface Tail {
  file: string
  first: number
  bytes: number
  /** The highest step with a SEND in the file before the tail (first - 1 when none). */
  before: number
}

/** Every step of an agent's journal directory, by number, with what could not be read. */
export function readJournal(dir: string): JournalRead {
  const steps = new Map<number, JournalStep>()
  const answers = new Map<number, Buffer[]>()
  const damage: Damage[] = []
  const lastIn = new Map<string, number>()
  const tails: Tail[] = []
  const tornHeads: { step: number; payload: Buffer }[] = []
  let highest = 0
  let minSend = Infinity
  const files = segmentFiles(dir)
  for (const { file, first } of files) {
    const data = fs.readFileSync(file)
    // A file is made for its first step's SEND: its name says that number was given out.
    highest = Math.max(highest, first)
    if (data.length === 0) tails.push({ file, first, bytes: 0, before: first - 1 })
    const scanned = scanFrames(file, data)
    const named = scanned.frames.map((f) => f.step)
    for (const d of scanned.damage) {
      if (!plausible(d.step, first, named)) {
        delete d.step
        delete d.type
      }
      damage.push(d)
      if (d.step !== undefined) highest = Math.max(highest, d.step)
      if (d.kind === 'torn' && d.type === FRAME.HEAD && d.step !== undefined)
        tornHeads.push({ step: d.step, payload: data.subarray(d.offset + HEADER_BYTES, d.offset + d.length) })
      // The file's end: what it lost may have held SEND frames of steps after the last one read.
      const framed = d.kind === 'torn' && d.type !== undefined && d.type !== FRAME.SEND
      if (d.offset + d.length === data.length && !framed) {
        const before = Math.max(first - 1, ...named.filter((n, i) => scanned.frames[i]!.offset < d.offset))
        tails.push({ file, first, bytes: d.length, before })
      }
    }
    const unclaimed = new Map<number, Damage>()
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
        minSend = Math.min(minSend, HEADER_BYTES + f.payload.length)
        steps.set(f.step, s)
        answers.set(f.step, [])
        highest = Math.max(highest, f.step)
        lastIn.set(file, Math.max(lastIn.get(file) ?? 0, f.step))
        continue
      }
      const s = steps.get(f.step)
      if (!s) {
        // A whole frame of a step whose send half is damaged or gone: kept aside, never dropped.
        const at = f.offset - HEADER_BYTES
        const u = unclaimed.get(f.step)
        if (u) u.length = f.offset + f.payload.length - u.offset
        else
          unclaimed.set(f.step, {
            file,
            offset: at,
            length: HEADER_BYTES + f.payload.length,
            kind: 'unclaimed',
            step: f.step,
            type: f.type as FrameType,
          })
        highest = Math.max(highest, f.step)
        continue
      }
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
    damage.push(...unclaimed.values())
  }
  for (const [n, parts] of answers) (steps.get(n) as JournalStep).answer = Buffer.concat(parts)
  // A damaged frame of a step's answer (not its SEND, not a write that never finished): that answer is not what came.
  for (const d of damage) {
    const s =
      d.step !== undefined && d.type !== FRAME.SEND && d.kind !== 'torn' ? steps.get(d.step) : undefined
    if (s) s.damaged = d
  }
  // A HEAD a torn last write cut short: the answer before it is whole when what is left says so.
  for (const t of tornHeads) {
    const s = steps.get(t.step)
    const h = s && !s.head && !s.damaged ? repairHead(t.payload) : undefined
    if (s && h && wholeByHead(h, s.answer.length)) s.head = { ...h, bytes: s.answer.length }
  }
  const unrecorded = lostNumbers(tails, files, minSend)
  for (const u of unrecorded) highest = Math.max(highest, u.to)
  return { steps: new Map([...steps].sort((a, b) => a[0] - b[0])), damage, highest, lastIn, unrecorded }
}

/**
 * The numbers tails (and empty files) may have given out with no record: up to what their bytes
 * could hold (one step per smallest SEND seen), below the next file's first step.
 */
function lostNumbers(
  tails: readonly Tail[],
  files: readonly { file: string; first: number }[],
  minSend: number,
): Unrecorded[] {
  const out: Unrecorded[] = []
  for (const t of tails) {
    const next = files.find((f) => f.first > t.first)?.first
    let to =
      t.bytes === 0
        ? t.first
        : numbersIn(t.before, t.bytes, Number.isFinite(minSend) ? minSend : MIN_SEND_BYTES)
    if (next !== undefined) to = Math.min(to, next - 1)
    const from = Math.max(t.before + 1, t.first)
    if (to >= from) out.push({ file: t.file, from, to })
  }
  return out
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
