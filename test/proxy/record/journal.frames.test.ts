/**
 * record/journal frames: a step's SEND, SENT, CHUNK and HEAD frames read back as written; the
 * piece that completes an answer goes in with its HEAD in one write, and reads back the same as a
 * CHUNK and a HEAD written apart.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Journal, readJournal, readPlaced } from '../../../proxy/record/journal'
import type { StepMeta } from '../../../generated/meta'

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

    const steps = readJournal(path.join(dir, 'a'))
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
