/**
 * record/recover/unfinished: what a journal step a crash left uncommitted becomes, from what
 * reached the journal. An answer with its completion marker is finished as the worker would have
 * (usage read, `ok`); an answer cut off is `interrupted` with its bytes as response.txt; a step
 * recorded and never sent is `not_sent`; a damaged answer keeps the request and names where the
 * bytes went; only steps above the branch's become jobs, in order; numbers a damaged send half
 * gave out are named as gaps.
 */
import type { StepMeta } from '../../../../generated/meta'
import { FRAME, type ResponseHead } from '../../../../proxy/record/journal/format'
import type { JournalRead, JournalStep } from '../../../../proxy/record/journal/reader'
import { finishUnfinished, gapsOf, pendingJobs } from '../../../../proxy/record/recover/unfinished'
import { MODEL, requestBytes, sentMeta } from '../steps.support'

const ANSWER = Buffer.from(
  JSON.stringify({
    content: [{ type: 'text', text: 'hi' }],
    stop_reason: 'end_turn',
    usage: { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
  }),
)

const HEAD: ResponseHead = {
  status: 200,
  headers: { 'content-type': 'application/json' },
  bytes: ANSWER.length,
  ttfb_ms: 3,
  total_ms: 9,
  ended_at: '2026-12-02T00:00:01.000Z',
}

function step(n: number, over: Partial<JournalStep> = {}): JournalStep {
  const request = requestBytes(`step ${n}`)
  return {
    n,
    meta: sentMeta('w', 'a', n) as StepMeta,
    request,
    place: {
      file: '/j/001.log',
      meta: { offset: 20, length: 10 },
      request: { offset: 30, length: request.length },
      chunks: [],
    },
    sent: true,
    answer: Buffer.alloc(0),
    head: undefined,
    ...over,
  }
}

describe('finishUnfinished', () => {
  it('finishes an answer whose completion marker was written as the worker would have: ok, with its usage', () => {
    const f = finishUnfinished(step(1, { answer: ANSWER, head: HEAD }), undefined)
    expect(f.meta).toMatchObject({
      outcome: 'ok',
      status: 200,
      stop_reason: 'end_turn',
      response_file: 'response.json',
      usage: { input_tokens: 10, output_tokens: 5 },
      ended_at: HEAD.ended_at,
      error: null,
    })
    expect(f.response?.file).toBe('response.json')
  })

  it('records an answer cut off as interrupted, its bytes kept raw as response.txt', () => {
    const f = finishUnfinished(step(2, { answer: ANSWER.subarray(0, 12) }), undefined)
    expect(f.meta).toMatchObject({
      outcome: 'interrupted',
      status: null,
      response_file: 'response.txt',
      usage: null,
      error: { code: 'INTERRUPTED' },
    })
    expect(f.meta.error?.message).toContain('after 12 bytes of the answer')
    expect(f.response).toEqual({ file: 'response.txt', bytes: { bytes: ANSWER.subarray(0, 12) } })
  })

  it('records a step written and never sent as not_sent, with no answer', () => {
    const f = finishUnfinished(step(3, { sent: false }), undefined)
    expect(f.meta).toMatchObject({ outcome: 'not_sent', response_file: null, error: { code: 'NOT_SENT' } })
    expect(f.response).toBeNull()
  })

  it('keeps the request of a step whose answer is damaged, no answer, and says where the damaged bytes are', () => {
    const f = finishUnfinished(
      step(4, {
        answer: ANSWER,
        head: HEAD,
        damaged: { file: '/j/001.log', offset: 300, length: 40, kind: 'corrupt', step: 4, type: FRAME.CHUNK },
      }),
      undefined,
    )
    expect(f.meta).toMatchObject({ outcome: 'interrupted', status: 200, response_file: null })
    expect(f.meta.error).toMatchObject({ code: 'RECORD_DAMAGED' })
    expect(f.meta.error?.message).toContain('40 bytes at 001.log@300')
    expect(f.response).toBeNull()
  })
})

describe('pendingJobs and gapsOf', () => {
  const read = (): JournalRead => ({
    steps: new Map([1, 2, 3].map((n) => [n, step(n, { answer: ANSWER, head: HEAD })])),
    damage: [
      { file: '/j/001.log', offset: 900, length: 60, kind: 'corrupt', step: 5, type: FRAME.SEND },
      { file: '/j/001.log', offset: 10, length: 60, kind: 'corrupt', step: 1, type: FRAME.SEND },
      { file: '/j/001.log', offset: 990, length: 30, kind: 'corrupt', step: 6, type: FRAME.CHUNK },
    ],
    highest: 6,
    lastIn: new Map([['/j/001.log', 3]]),
    unrecorded: [],
  })

  it('makes a job of each step above the branch, in step order, with its model and its place', () => {
    const jobs = pendingJobs('a', read(), 1, undefined)
    expect(jobs.map((j) => [j.agent, j.n, j.model])).toEqual([
      ['a', 2, MODEL],
      ['a', 3, MODEL],
    ])
    expect(jobs[0]?.request.file).toBe('/j/001.log')
    expect(jobs[0]?.finished?.meta.outcome).toBe('ok')
    expect(pendingJobs('a', read(), 3, undefined)).toEqual([])
  })

  it('names the numbers above the branch a damaged send half gave out with no record', () => {
    expect(gapsOf('a', read(), 0)).toEqual([{ agent: 'a', n: 5 }])
    expect(gapsOf('a', read(), 5)).toEqual([])
  })
})
