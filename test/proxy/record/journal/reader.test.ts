/**
 * record/journal/reader: a reader never drops what it cannot read. One flipped byte costs the frame
 * it is in; a zeroed tail is reported as damage and what precedes it reads whole; a torn last
 * frame is reported as torn; a damaged frame of an answer marks its step damaged; a damaged
 * header's step counts toward the numbers given out only when it is plausible; files are read in
 * the order they were made.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { StepMeta } from '../../../../generated/meta'
import { Journal } from '../../../../proxy/record/journal/writer'
import { FRAME, HEADER_BYTES, VERSION } from '../../../../proxy/record/journal/format'
import { readJournal, segmentFiles } from '../../../../proxy/record/journal/reader'

let dir: string
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-jread-'))
})
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

const meta = (step: number): StepMeta => ({ step: String(step).padStart(3, '0') }) as unknown as StepMeta
const head = {
  status: 200,
  headers: { 'content-type': 'application/json' },
  ttfb_ms: 1,
  total_ms: 2,
  ended_at: 'x',
}

/** Five whole steps of agent `a`, each with its answer; returns the file and each step's SEND offset. */
function fiveSteps(): { file: string; sends: number[] } {
  const journal = new Journal(false)
  const a = journal.agent(path.join(dir, 'a'))
  const sends: number[] = []
  for (let n = 1; n <= 5; n++) {
    const e = a.send(n, meta(n), Buffer.from(JSON.stringify({ n, pad: 'x'.repeat(200) })))
    sends.push(e.place.meta.offset - 4 - HEADER_BYTES)
    e.sent()
    e.chunk(Buffer.from(`{"answer":${n}}`), head)
  }
  journal.close()
  return { file: segmentFiles(path.join(dir, 'a'))[0]!.file, sends }
}

describe('a damaged journal', () => {
  it('loses only the frame a flipped byte is in, and reads every later step', () => {
    const { file, sends } = fiveSteps()
    const data = fs.readFileSync(file)
    const inside = (sends[1] as number) + HEADER_BYTES + 40 // inside step 2's SEND payload
    data.writeUInt8(data.readUInt8(inside) ^ 0x20, inside)
    fs.writeFileSync(file, data)
    const read = readJournal(path.join(dir, 'a'))
    expect([...read.steps.keys()]).toEqual([1, 3, 4, 5])
    // Step 2's answer frames are whole: reported as unclaimed (kept aside), never dropped.
    expect(read.damage).toEqual([
      expect.objectContaining({ offset: sends[1], kind: 'corrupt', step: 2, type: FRAME.SEND }),
      expect.objectContaining({ kind: 'unclaimed', step: 2, type: FRAME.SENT }),
    ])
    const unclaimed = read.damage[1]!
    expect(unclaimed.offset + unclaimed.length).toBe(sends[2])
    expect(read.highest).toBe(5)
    expect(read.steps.get(5)!.answer.toString()).toBe('{"answer":5}')
  })

  it("marks a step whose answer frame is damaged, and keeps the others' answers whole", () => {
    const { file } = fiveSteps()
    const data = fs.readFileSync(file)
    const at = data.indexOf('{"answer":3}')
    data.writeUInt8(data.readUInt8(at + 3) ^ 0x01, at + 3)
    fs.writeFileSync(file, data)
    const read = readJournal(path.join(dir, 'a'))
    expect(read.steps.get(3)!.damaged).toEqual(expect.objectContaining({ step: 3, type: FRAME.CHUNK }))
    expect(read.steps.get(2)!.damaged).toBeUndefined()
    expect(read.steps.get(4)!.answer.toString()).toBe('{"answer":4}')
  })

  it('reports a zeroed last 4 KB as damage and reads everything before it', () => {
    const { file, sends } = fiveSteps()
    const data = fs.readFileSync(file)
    const cut = (sends[3] as number) + 10
    data.fill(0, cut)
    fs.writeFileSync(file, data)
    const read = readJournal(path.join(dir, 'a'))
    expect([...read.steps.keys()]).toEqual([1, 2, 3])
    expect(read.damage).toEqual([
      expect.objectContaining({
        offset: sends[3],
        length: data.length - (sends[3] as number),
        kind: 'corrupt',
      }),
    ])
    // Steps 4 and 5 were in the zeroed bytes: their numbers stay given out (the count errs high:
    // one per smallest SEND the zeros could hold).
    expect(read.highest).toBeGreaterThanOrEqual(5)
    expect(read.unrecorded).toEqual([{ file, from: 4, to: read.highest }])
  })

  it('reports a last HEAD cut short as torn, and reads the whole answer before it as answered', () => {
    const { file } = fiveSteps()
    fs.truncateSync(file, fs.statSync(file).size - 7)
    const read = readJournal(path.join(dir, 'a'))
    expect(read.damage).toEqual([expect.objectContaining({ kind: 'torn', step: 5, type: FRAME.HEAD })])
    expect(read.steps.get(5)!.damaged).toBeUndefined()
    expect(read.steps.get(5)!.head).toEqual({ ...head, bytes: '{"answer":5}'.length })
    expect(read.unrecorded).toEqual([])
    expect(read.highest).toBe(5)
  })

  it('does not read an answer as whole from a torn HEAD whose declared length its chunks fall short of, or one cut inside its headers', () => {
    const journal = new Journal(false)
    const e = journal.agent(path.join(dir, 'a')).send(1, meta(1), Buffer.from('{}'))
    e.sent()
    e.chunk(Buffer.from('{"part":'))
    e.head({ ...head, headers: { ...head.headers, 'content-length': '20' } })
    journal.close()
    const file = segmentFiles(path.join(dir, 'a'))[0]!.file
    fs.truncateSync(file, fs.statSync(file).size - 7)
    expect(readJournal(path.join(dir, 'a')).steps.get(1)!.head).toBeUndefined()
    const data = fs.readFileSync(file)
    fs.truncateSync(file, data.indexOf('"headers"') + 14)
    expect(readJournal(path.join(dir, 'a')).steps.get(1)!.head).toBeUndefined()
  })

  it("reserves an empty file's name and a lost tail's numbers, up to the next file's first step", () => {
    const journal = new Journal(false)
    const a = journal.agent(path.join(dir, 'a'))
    a.send(1, meta(1), Buffer.from('{"one":1}'))
    journal.close()
    // The file a later start made for step 9, which a power cut left empty.
    fs.writeFileSync(path.join(dir, 'a', '009.log'), '')
    const first = segmentFiles(path.join(dir, 'a'))[0]!.file
    fs.appendFileSync(first, Buffer.alloc(2000)) // zeros where steps 2.. were
    const read = readJournal(path.join(dir, 'a'))
    expect(read.unrecorded).toEqual([
      { file: first, from: 2, to: 8 },
      { file: path.join(dir, 'a', '009.log'), from: 9, to: 9 },
    ])
    expect(read.highest).toBe(9)
  })

  it('resyncs past a torn frame in the middle of a file (a writer that did not cut it off)', () => {
    const journal = new Journal(false)
    const a = journal.agent(path.join(dir, 'a'))
    a.send(1, meta(1), Buffer.from('{}'))
    journal.close()
    const file = segmentFiles(path.join(dir, 'a'))[0]!.file
    const whole = fs.readFileSync(file)
    // A second step's frame torn at 20 bytes, then a third whole step appended after it.
    const other = new Journal(false)
    other.agent(path.join(dir, 'b')).send(2, meta(2), Buffer.from('{"two":2}'))
    other.agent(path.join(dir, 'b')).send(3, meta(3), Buffer.from('{"three":3}'))
    other.close()
    const b = fs.readFileSync(segmentFiles(path.join(dir, 'b'))[0]!.file)
    const secondAt = b.indexOf(Buffer.from([FRAME.SEND, VERSION, 0, 0, 3]))
    fs.writeFileSync(file, Buffer.concat([whole, b.subarray(0, 20), b.subarray(secondAt)]))
    const read = readJournal(path.join(dir, 'a'))
    expect([...read.steps.keys()]).toEqual([1, 3])
    expect(read.steps.get(3)!.request.toString()).toBe('{"three":3}')
    expect(read.damage).toEqual([expect.objectContaining({ length: 20, kind: 'corrupt', step: 2 })])
    expect(read.highest).toBe(3)
  })

  it('does not count a step number a damaged header names far from every other (a flipped bit in it)', () => {
    const { file, sends } = fiveSteps()
    const data = fs.readFileSync(file)
    data.writeUInt32LE(4_000_000, (sends[2] as number) + 4) // step 3's header now names step 4 000 000
    fs.writeFileSync(file, data)
    const read = readJournal(path.join(dir, 'a'))
    expect(read.highest).toBe(5)
    expect(read.damage[0]?.step).toBeUndefined()
  })
})
