/**
 * record/journal/tee: SENT before the send, each piece of the answer before the client has it,
 * HEAD before the client can know the answer is whole (with the last declared byte, in the same
 * write); a frame the disk refuses stops the copy, is told once, and leaves the answer not whole.
 * Real journal files in a temporary directory; the refused write is a mocked writev.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { StepMeta } from '../../../../generated/meta'
import { Journal, type JournalEntry } from '../../../../proxy/record/journal/writer'
import { readJournal } from '../../../../proxy/record/journal/reader'
import { type Head, JournalTee } from '../../../../proxy/record/journal/tee'

let dir: string
let journal: Journal
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-tee-'))
  journal = new Journal(false)
})
afterEach(() => {
  jest.restoreAllMocks()
  journal.close()
  fs.rmSync(dir, { recursive: true, force: true })
})

const meta = { step: '001' } as unknown as StepMeta
const HEAD: Head = { status: 200, headers: {}, ttfb_ms: 1, total_ms: 2, ended_at: '2026-12-06T00:00:00.000Z' }
const entry = (): JournalEntry => journal.agent(dir).send(1, meta, Buffer.from('{}'))
const step = () => readJournal(dir).steps.get(1)!

/** Count the writes the journal makes (each frame group is one writev). */
function countWrites(): { n: number } {
  const count = { n: 0 }
  const real = fs.writevSync
  jest.spyOn(fs, 'writevSync').mockImplementation((fd, buffers, position) => {
    count.n++
    return real(fd, buffers, position)
  })
  return count
}

describe('JournalTee', () => {
  it('writes SENT, each piece and HEAD in order, and whole says the answer is in the journal', () => {
    const tee = new JournalTee(entry(), () => undefined)
    tee.sent()
    expect(step().sent).toBe(true)
    tee.expect(undefined)
    tee.chunk(Buffer.from('data: a\n\n'), () => HEAD)
    expect(step().answer.toString()).toBe('data: a\n\n') // in the journal before the caller hands it on
    tee.chunk(Buffer.from('data: b\n\n'), () => HEAD)
    expect([step().head, tee.whole]).toEqual([undefined, false])
    tee.end(() => HEAD)
    expect(step().head).toEqual({ ...HEAD, bytes: 18 })
    expect(tee.whole).toBe(true)
  })

  it('writes the last declared byte and HEAD in one write, and no second HEAD at the end', () => {
    const tee = new JournalTee(entry(), () => undefined)
    tee.sent()
    tee.expect(10)
    tee.chunk(Buffer.from('{"a":'), () => HEAD)
    const writes = countWrites()
    tee.chunk(Buffer.from('12345'), () => HEAD)
    expect(writes.n).toBe(1)
    expect(step().head).toEqual({ ...HEAD, bytes: 10 })
    expect(tee.whole).toBe(true)
    tee.end(() => ({ ...HEAD, status: 500 }))
    expect(writes.n).toBe(1)
    expect(step().head?.status).toBe(200)
  })

  it('stops the copy at the first refused frame, tells it once, and leaves the answer not whole', () => {
    const faults: Error[] = []
    const tee = new JournalTee(entry(), (err) => faults.push(err))
    tee.sent()
    tee.chunk(Buffer.from('data: a\n\n'), () => HEAD)
    jest.spyOn(fs, 'writevSync').mockImplementation(() => {
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })
    })
    tee.chunk(Buffer.from('data: b\n\n'), () => HEAD)
    tee.chunk(Buffer.from('data: c\n\n'), () => HEAD)
    tee.end(() => HEAD)
    jest.restoreAllMocks()
    expect(faults.map((e) => (e as NodeJS.ErrnoException).code)).toEqual(['ENOSPC'])
    expect(tee.failure).toBe(faults[0])
    expect(tee.whole).toBe(false)
    expect([step().answer.toString(), step().head]).toEqual(['data: a\n\n', undefined])
  })

  it('throws when SENT cannot be written (the caller sends nothing)', () => {
    const tee = new JournalTee(entry(), () => undefined)
    jest.spyOn(fs, 'writevSync').mockImplementation(() => {
      throw Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO' })
    })
    expect(() => tee.sent()).toThrow(/EIO/)
  })
})
