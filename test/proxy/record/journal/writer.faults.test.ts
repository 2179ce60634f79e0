/**
 * record/journal on a failing disk: a write the disk takes only in part is cut off again before
 * anything else is appended, so the frames after it sit where the writer says and read back whole;
 * a file that cannot be cut back takes no new frames and the next step opens a file of its own; a
 * failed write leaves the step's byte count as it was; files that were there before the writer
 * (a crash's) are never appended to.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { StepMeta } from '../../../../generated/meta'
import { Journal } from '../../../../proxy/record/journal/writer'
import { readJournal, readPlaced, segmentFiles } from '../../../../proxy/record/journal/reader'

let dir: string
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-jfaults-'))
})
afterEach(() => {
  jest.restoreAllMocks()
  fs.rmSync(dir, { recursive: true, force: true })
})

const meta = (step: number): StepMeta => ({ step: String(step).padStart(3, '0') }) as unknown as StepMeta
const enospc = (): Error =>
  Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })

/** The next writev takes only `take` bytes for real, as a disk that fills mid-write does. */
function shortWriteOnce(take: number): void {
  const real = fs.writevSync
  jest.spyOn(fs, 'writevSync').mockImplementationOnce((fd, buffers) => {
    const all = Buffer.concat(buffers as Buffer[])
    return real(fd, [all.subarray(0, take)])
  })
}

describe('a write the disk takes in part', () => {
  it('is cut off again, so the next steps read back whole where the writer placed them', () => {
    const journal = new Journal(false)
    const a = journal.agent(path.join(dir, 'a'))
    a.send(1, meta(1), Buffer.from('{"one":1}'))
    const size = fs.statSync(segmentFiles(path.join(dir, 'a'))[0]!.file).size
    shortWriteOnce(20)
    expect(() => a.send(2, meta(2), Buffer.from('{"two":2}'))).toThrow(/took 20 of/)
    expect(fs.statSync(segmentFiles(path.join(dir, 'a'))[0]!.file).size).toBe(size)
    const e2 = a.send(2, meta(2), Buffer.from('{"two, again":2}'))
    const e3 = a.send(3, meta(3), Buffer.from('{"three":3}'))
    expect(readPlaced(e2.place.file, [e2.place.request]).toString()).toBe('{"two, again":2}')
    expect(readPlaced(e3.place.file, [e3.place.request]).toString()).toBe('{"three":3}')
    const read = readJournal(path.join(dir, 'a'))
    expect([...read.steps.keys()]).toEqual([1, 2, 3])
    expect(read.steps.get(2)!.request.toString()).toBe('{"two, again":2}')
    expect(read.damage).toEqual([])
    journal.close()
  })

  it('leaves a chunk that failed out of the answer: its byte count and place stay as before', () => {
    const journal = new Journal(false)
    const e = journal.agent(path.join(dir, 'a')).send(1, meta(1), Buffer.from('{}'))
    e.chunk(Buffer.from('data: one\n\n'))
    shortWriteOnce(5)
    expect(() => e.chunk(Buffer.from('data: two\n\n'))).toThrow()
    e.chunk(Buffer.from('data: three\n\n'), {
      status: 200,
      headers: {},
      ttfb_ms: 1,
      total_ms: 2,
      ended_at: 'x',
    })
    expect(e.bytes).toBe('data: one\n\ndata: three\n\n'.length)
    const s = readJournal(path.join(dir, 'a')).steps.get(1)!
    expect(s.answer.toString()).toBe('data: one\n\ndata: three\n\n')
    expect(s.head?.bytes).toBe(e.bytes)
    journal.close()
  })

  it('closes a file that cannot be cut back: its steps take no more frames, the next step opens a new file', () => {
    const journal = new Journal(false)
    const a = journal.agent(path.join(dir, 'a'))
    const e1 = a.send(1, meta(1), Buffer.from('{"one":1}'))
    shortWriteOnce(7)
    jest.spyOn(fs, 'ftruncateSync').mockImplementationOnce(() => {
      throw Object.assign(new Error('EIO: i/o error'), { code: 'EIO' })
    })
    expect(() => a.send(2, meta(2), Buffer.from('{"two":2}'))).toThrow(/took 7/)
    expect(() => e1.sent()).toThrow(/could not be cut back/)
    const e2 = a.send(2, meta(2), Buffer.from('{"two":2}'))
    expect(path.basename(e2.place.file)).toBe('002.log')
    const read = readJournal(path.join(dir, 'a'))
    expect([...read.steps.keys()]).toEqual([1, 2])
    // The torn piece stays in the closed file and is reported, not read as a frame.
    expect(read.damage.map((d) => [path.basename(d.file), d.kind, d.length])).toEqual([
      ['001.log', 'torn', 7],
    ])
    journal.close()
  })

  it('refuses the send half when the disk fails outright, and the same number goes in once it has room', () => {
    const journal = new Journal(true)
    const a = journal.agent(path.join(dir, 'a'))
    jest.spyOn(fs, 'writevSync').mockImplementationOnce(() => {
      throw enospc()
    })
    expect(() => a.send(1, meta(1), Buffer.from('{}'))).toThrow(/ENOSPC/)
    a.send(1, meta(1), Buffer.from('{"ok":true}'))
    expect(readJournal(path.join(dir, 'a')).steps.get(1)!.request.toString()).toBe('{"ok":true}')
    journal.close()
  })

  it('cuts back a frame whose flush to the disk failed (journal.fsync)', () => {
    const journal = new Journal(true)
    const a = journal.agent(path.join(dir, 'a'))
    jest.spyOn(fs, 'fdatasyncSync').mockImplementationOnce(() => {
      throw Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' })
    })
    expect(() => a.send(1, meta(1), Buffer.from('{}'))).toThrow(/EIO/)
    expect(readJournal(path.join(dir, 'a')).steps.size).toBe(0)
    journal.close()
  })
})

describe('files a crash left', () => {
  it('are read but never appended to: the first new step opens a file of its own', () => {
    const first = new Journal(false)
    first.agent(path.join(dir, 'a')).send(1, meta(1), Buffer.from('{"one":1}'))
    first.close()
    // A torn frame at the end, as a crash mid-write leaves.
    const old = segmentFiles(path.join(dir, 'a'))[0]!.file
    fs.appendFileSync(old, Buffer.from([3, 1, 0, 0, 1, 0, 0, 0, 99, 0, 0, 0]))
    const second = new Journal(false)
    const e = second.agent(path.join(dir, 'a')).send(2, meta(2), Buffer.from('{"two":2}'))
    expect(e.place.file).not.toBe(old)
    const read = readJournal(path.join(dir, 'a'))
    expect([...read.steps.keys()]).toEqual([1, 2])
    expect(read.damage.map((d) => d.kind)).toEqual(['torn'])
    second.close()
  })

  it('gives a new file another name when one of that step is already there', () => {
    const first = new Journal(false)
    first.agent(path.join(dir, 'a')).send(1, meta(1), Buffer.from('{}'))
    first.close()
    fs.truncateSync(segmentFiles(path.join(dir, 'a'))[0]!.file, 0) // nothing of step 1 survived
    const second = new Journal(false)
    const e = second.agent(path.join(dir, 'a')).send(1, meta(1), Buffer.from('{"again":1}'))
    expect(path.basename(e.place.file)).toBe('001.2.log')
    expect(segmentFiles(path.join(dir, 'a')).map((s) => path.basename(s.file))).toEqual([
      '001.log',
      '001.2.log',
    ])
    second.close()
  })
})

describe('a disk that fills mid-answer, with a reserve', () => {
  const HEAD = { status: 200, headers: {}, ttfb_ms: 1, total_ms: 2, ended_at: 'x' }
  const reserve = (): number => fs.statSync(path.join(dir, '.reserve')).size
  const refuseOnce = (): void => {
    jest.spyOn(fs, 'writevSync').mockImplementationOnce(() => {
      throw enospc()
    })
  }

  it("writes a sent step's refused answer frame again into room the reserve gives back: the answer and its HEAD are whole", () => {
    const journal = new Journal(false, 256 * 1024)
    const e = journal.agent(path.join(dir, 'a')).send(1, meta(1), Buffer.from('{}'))
    expect(reserve()).toBe(256 * 1024)
    e.sent()
    e.chunk(Buffer.from('data: one\n\n'))
    shortWriteOnce(4)
    e.chunk(Buffer.from('data: two\n\n'))
    refuseOnce()
    e.head(HEAD)
    expect(reserve()).toBe(256 * 1024 - 2 * 64 * 1024)
    const s = readJournal(path.join(dir, 'a')).steps.get(1)!
    expect([s.answer.toString(), s.head?.bytes]).toEqual(['data: one\n\ndata: two\n\n', 22])
    expect(readJournal(path.join(dir, 'a')).damage).toEqual([])
    journal.close()
  })

  it('never draws on it for a send half, and refuses a new step while it cannot be made whole again', () => {
    const journal = new Journal(false, 256 * 1024)
    const a = journal.agent(path.join(dir, 'a'))
    refuseOnce()
    expect(() => a.send(1, meta(1), Buffer.from('{}'))).toThrow(/ENOSPC/)
    expect(reserve()).toBe(256 * 1024)
    const e1 = a.send(1, meta(1), Buffer.from('{}'))
    e1.sent()
    refuseOnce()
    e1.chunk(Buffer.from('drawn on')) // the answer of a sent step draws on the reserve
    expect(reserve()).toBe(256 * 1024 - 64 * 1024)
    jest.spyOn(fs, 'writeSync').mockImplementationOnce(() => {
      throw enospc()
    })
    expect(() => a.send(2, meta(2), Buffer.from('{}'))).toThrow(/reserve .* could not be made whole/)
    expect(readJournal(path.join(dir, 'a')).steps.size).toBe(1)
    a.send(2, meta(2), Buffer.from('{}'))
    expect(reserve()).toBe(256 * 1024)
    journal.close()
  })
})
