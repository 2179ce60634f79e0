/**
 * record/commit/queue: the commit worker's queue policy, without a thread. A batch starts after
 * its gathering window (at once when full); it takes consecutive commits up to its bounds in steps
 * and bytes, refuses a stalled agent's step, and ends where a job cannot be read now (that job
 * stays first); after the batch a step is committed, goes again (a fault that passes) or is given
 * up; a fault's waits grow to a ceiling and repeat it; packs are merged once enough commits piled up.
 */
import { RefLocked } from '../../../../proxy/store/git'
import {
  afterBatch,
  BATCH_MAX_BYTES,
  BATCH_MAX_STEPS,
  BATCH_WINDOW_MS,
  BUSY_WINDOW_MS,
  gatherWait,
  type Look,
  maintainDue,
  nextTry,
  RETRY_MS,
  takeBatch,
} from '../../../../proxy/record/commit/queue'

interface Job {
  kind: 'commit' | 'maintain'
  n: number
  look?: Look<number>
}
const commit = (n: number, look?: Look<number>): Job => ({ kind: 'commit', n, look })
const take = (queue: Job[]) =>
  takeBatch(
    queue,
    (j) => j.kind === 'commit',
    (j) => j.look ?? { kind: 'step', step: j.n, bytes: 10 },
  )

describe('the gathering window', () => {
  it('waits BATCH_WINDOW_MS after the first job, BUSY_WINDOW_MS after a previous batch, and nothing once full', () => {
    expect(gatherWait({ now: 1000, lastBatch: 1000, first: true, queued: 1 })).toBe(BATCH_WINDOW_MS)
    expect(gatherWait({ now: 1030, lastBatch: 1000, first: false, queued: 3 })).toBe(BUSY_WINDOW_MS - 30)
    expect(gatherWait({ now: 5000, lastBatch: 1000, first: false, queued: 3 })).toBe(0)
    expect(gatherWait({ now: 1000, lastBatch: 1000, first: true, queued: BATCH_MAX_STEPS })).toBe(0)
  })
})

describe('one batch', () => {
  it('takes consecutive commits in order and stops at a maintain', () => {
    const queue = [commit(1), commit(2), { kind: 'maintain', n: 0 } as Job, commit(3)]
    const r = take(queue)
    expect(r.batch.map((b) => b.step)).toEqual([1, 2])
    expect(queue.map((j) => j.kind)).toEqual(['maintain', 'commit'])
    expect(r.waiting).toBe(false)
  })

  it('is bounded in steps and in bytes', () => {
    const many = Array.from({ length: BATCH_MAX_STEPS + 5 }, (_, i) => commit(i + 1))
    expect(take(many).batch).toHaveLength(BATCH_MAX_STEPS)
    expect(many).toHaveLength(5)
    const big = [1, 2, 3].map((n) => commit(n, { kind: 'step', step: n, bytes: BATCH_MAX_BYTES / 2 }))
    expect(take(big).batch.map((b) => b.step)).toEqual([1, 2])
    expect(big.map((j) => j.n)).toEqual([3])
  })

  it('answers a refused step at once and takes the steps after it; a job that cannot be read now ends the batch and stays first', () => {
    const queue = [
      commit(1),
      commit(2, { kind: 'refused', error: new Error('stalled') }),
      commit(3),
      commit(4, { kind: 'wait' }),
      commit(5),
    ]
    const r = take(queue)
    expect(r.batch.map((b) => b.step)).toEqual([1, 3])
    expect(r.refused.map((x) => [x.job.n, x.error.message])).toEqual([[2, 'stalled']])
    expect(r.waiting).toBe(true)
    expect(queue.map((j) => j.n)).toEqual([4, 5])
  })

  it('takes nothing from an empty queue', () => {
    expect(take([])).toEqual({ batch: [], refused: [], waiting: false })
  })
})

describe('after a batch', () => {
  it('commits a step without failure, sends one whose fault passes again, and gives up the rest', () => {
    expect(afterBatch(undefined, false)).toBe('committed')
    expect(afterBatch(new RefLocked('refs/heads/agents/a', 'x.lock'), false)).toBe('again')
    expect(afterBatch(Object.assign(new Error('full'), { code: 'ENOSPC' }), false)).toBe('again')
    expect(afterBatch(new Error('a tree where a file should be'), false)).toBe('given-up')
    // A stalled agent's step is never committed before the one that stalled it.
    expect(afterBatch(undefined, true)).toBe('given-up')
    expect(afterBatch(Object.assign(new Error('full'), { code: 'ENOSPC' }), true)).toBe('given-up')
  })
})

describe('a fault', () => {
  it('keeps when it started, counts its tries, and waits longer each time up to the last wait, then repeats it', () => {
    let fault
    const waits: number[] = []
    for (let i = 0; i < RETRY_MS.length + 2; i++) {
      const next = nextTry(fault, new Error(`try ${i}`), `t${i}`)
      fault = next.fault
      waits.push(next.waitMs)
    }
    expect(waits).toEqual([...RETRY_MS, RETRY_MS[RETRY_MS.length - 1], RETRY_MS[RETRY_MS.length - 1]])
    expect(fault).toEqual({ since: 't0', error: `try ${RETRY_MS.length + 1}`, attempts: RETRY_MS.length + 2 })
  })
})

describe('merging packs', () => {
  it('is due once as many commits as asked piled up, never when asked for none', () => {
    expect(maintainDue(9, 10)).toBe(false)
    expect(maintainDue(10, 10)).toBe(true)
    expect(maintainDue(1000, 0)).toBe(false)
  })
})
