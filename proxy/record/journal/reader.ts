/**
 * Reading the journal (recovery, the CLI, the commit worker): an agent's files frame by frame
 * (journal/format the format, journal/writer the writer, journal/scan the frames of one file,
 * journal/places the bytes at known places). Invariant: a reader never drops what it cannot
 * read: past a torn or corrupt frame it resyncs on the next whole frame (legible header, payload
 * matching its CRC) and reads on, and every byte no whole frame accounts for is reported as damage
 * (where, how long, and the step its header names when that header is legible). Absent directories
 * read as no steps.
 */
import fs from 'node:fs'
import path from 'node:path'
import { parseStep } from '../../core/naming'
import { FRAME, HEADER_BYTES, type ResponseHead, type StepMeta, type StepPlace } from './format'
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
  /** The completion marker, when the answer is whole. */
  head: ResponseHead | undefined
  /** Some frame of this step's answer is damaged: its answer as read is not what came. */
  damaged?: Damage
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
