/**
 * record/journal frames: a step's SEND, SENT, CHUNK and HEAD frames read back as written; the
 * piece that completes an answer goes in with its HEAD in one write, and reads back the same as a
 * CHUNK and a HEAD written apart.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Journal } from '../../../../proxy/record/journal/writer'
import { readEach, readJournal, readPlaced } from '../../../../proxy/record/journal/reader'
import type { StepMeta } from '../../../../generated/meta'

let dir: string
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-frames-'))
})
afterEach(() => {
  jest.restoreAllMocks()
  fs.rmSync(dir, { recursive: true, force: true })
})

const meta = (step: number): StepMeta => ({ step: String(step).padStart(3, '0') }) as unknown as StepMeta
const head = {
  status: 200,
  headers: { 'content-type': 'application/json' },
  ttfb_ms: 1,
  total_ms: 2,
  ended_at: 'now',
}

describe('an answer in the journal', () => {
  it('reads back the same whether its last piece and HEAD went in one write or two', () => {
    const journal = new Journal(false)
    const agent = journal.agent(path.join(dir, 'a'))
    const apart = agent.send(1, meta(1), Buffer.from('{"request":1}'))
    apart.sent()
    apart.chunk(Buffer.from('{"an'))
    apart.chunk(Buffer.from('swer":1}'))
    apart.head(head)
    const together = agent.send(2, meta(2), Buffer.from('{"request":2}'))
    together.sent()
    together.chunk(Buffer.from('{"an'))
    const writes = jest.spyOn(fs, 'writevSync')
    together.chunk(Buffer.from('swer":2}'), head)
    expect(writes).toHaveBeenCalledTimes(1)
    journal.close()

    const steps = readJournal(path.join(dir, 'a')).steps
    for (const [n, entry] of [
      [1, apart],
      [2, together],
    ] as const) {
      const s = steps.get(n)
      expect(s?.answer.toString()).toBe(`{"answer":${n}}`)
      expect(s?.head).toEqual({ ...head, bytes: 12 })
      expect(s?.sent).toBe(true)
      // Where the server says the frames are is where a reader finds them.
      expect(entry.place).toEqual(s?.place)
      expect(readPlaced(entry.place.file, [entry.place.head!]).toString()).toBe(
        JSON.stringify({ ...head, bytes: 12 }),
      )
    }
  })
})

describe('reading several places of one file', () => {
  /** Steps 1 and 2 of one agent: a 10 KB request each, step 2's frames after all of step 1's. */
  const twoSteps = (requestBytes: number) => {
    const journal = new Journal(false)
    const agent = journal.agent(path.join(dir, 'a'))
    const entries = [1, 2].map((n) => {
      const e = agent.send(n, meta(n), Buffer.alloc(requestBytes, 48 + n))
      e.sent()
      e.chunk(Buffer.from(`{"answer":${n}}`), head)
      return e
    })
    journal.close()
    return entries
  }

  it("reads a step's meta, HEAD and answer with one read when they lie close, the same bytes as read apart", () => {
    const [, e] = twoSteps(10_000)
    const p = e!.place
    const lists = [[p.meta], [p.head!], p.chunks, [p.request]]
    const reads = jest.spyOn(fs, 'readSync')
    const together = readEach(p.file, lists)
    expect(reads).toHaveBeenCalledTimes(1)
    expect(together.map(String)).toEqual(lists.map((l) => String(readPlaced(p.file, l))))
    expect(together[2]!.toString()).toBe('{"answer":2}')
    expect(together[3]!.equals(Buffer.alloc(10_000, 50))).toBe(true)
  })

  it('reads places far apart (more than 64 KB of other frames between) each on its own', () => {
    const [e1, e2] = twoSteps(200_000)
    const lists = [[e1!.place.head!], [e2!.place.head!], []]
    const reads = jest.spyOn(fs, 'readSync')
    const apart = readEach(e1!.place.file, lists)
    expect(reads).toHaveBeenCalledTimes(2)
    expect(apart.map(String)).toEqual([
      JSON.stringify({ ...head, bytes: 12 }),
      JSON.stringify({ ...head, bytes: 12 }),
      '',
    ])
  })
})
