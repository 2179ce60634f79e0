/**
 * record/journal/entry: SENT, each CHUNK and HEAD of one step, placed where they were written; a
 * write that fails leaves the entry's byte count and places as they were; only the answer's frames
 * are marked as ones that may draw on the reserve.
 */
import type { Frame } from '../../../../proxy/record/journal/format'
import { FRAME } from '../../../../proxy/record/journal/format'
import { JournalEntry } from '../../../../proxy/record/journal/entry'

const HEAD = { status: 200, headers: {}, ttfb_ms: 1, total_ms: 2, ended_at: 'x' }

describe('a journal entry', () => {
  it('places what was written, marks only the answer as drawing on the reserve, and keeps its count when a write fails', () => {
    const writes: { types: number[]; answer: boolean }[] = []
    let at = 100
    let fail = false
    const entry = new JournalEntry(
      (frames: readonly Frame[], answer: boolean) => {
        if (fail) throw new Error('ENOSPC')
        writes.push({ types: frames.map((f) => f.type), answer })
        return frames.map(() => (at += 50))
      },
      1,
      { file: 'f', meta: { offset: 0, length: 0 }, request: { offset: 0, length: 0 }, chunks: [] },
    )
    entry.sent()
    entry.chunk(Buffer.from('abc'))
    fail = true
    expect(() => entry.chunk(Buffer.from('lost'))).toThrow()
    fail = false
    entry.chunk(Buffer.from('de'), HEAD)
    expect(writes).toEqual([
      { types: [FRAME.SENT], answer: false },
      { types: [FRAME.CHUNK], answer: true },
      { types: [FRAME.CHUNK, FRAME.HEAD], answer: true },
    ])
    expect(entry.bytes).toBe(5)
    expect(entry.place.chunks).toEqual([
      { offset: 200, length: 3 },
      { offset: 250, length: 2 },
    ])
    expect(entry.place.head).toEqual({ offset: 300, length: expect.any(Number) })
  })
})
