/**
 * proxy/stages/finish, run in-process on a real journal and workspace repository with the inline
 * committer (the worker's code, on this thread). Rules: the provider's status reaches the previous
 * record (the hold reads it); an answer whole in the journal is read there (its headers from its
 * HEAD frame), any other answer travels with its headers; the step's commit lands with usage, stop
 * reason and the response file the finish found; no status means no response file; a finish that
 * fails still commits the step, with the meta as the forward knew it, the error named and the
 * answer raw as `response.txt`; the step's commit is one job: where it is and how the forward went.
 */
import type { Identified } from '../../../plugins/runner'
import type { JsonObject } from '../../../proxy/core/json'
import { anthropic } from '../../../proxy/dialects'
import type { CommitJob } from '../../../proxy/record'
import type { FinishJob } from '../../../proxy/record/finish'
import { readCommittedFile } from '../../../proxy/record/read'
import { type CommitOptions, InlineCommitter } from '../../../proxy/record/commit/committer'
import { compose } from '../../../proxy/stages/compose'
import { commitJob, failedForward, finish } from '../../../proxy/stages/finish'
import type { Forwarded } from '../../../proxy/stages/forward'
import { hold } from '../../../proxy/stages/hold'
import { record, type Recorded } from '../../../proxy/stages/record'
import { accepted, routeTo, type StageRun, stageContext } from './stages.support'

const WHO: Identified = { workspace: 'w', agent: 'main' }
const REQUEST = '{"model":"claude-sonnet-4-5","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}'
const ANSWER = JSON.stringify({
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  content: [{ type: 'text', text: 'Hello.' }],
  stop_reason: 'end_turn',
  usage: { input_tokens: 10, output_tokens: 3, cache_read_input_tokens: 90, cache_creation_input_tokens: 0 },
})
const STREAM = [
  'event: message_start',
  'data: {"type":"message_start","message":{"usage":{"input_tokens":5,"output_tokens":1,"cache_read_input_tokens":100,"cache_creation_input_tokens":0}}}',
  '',
  'event: message_delta',
  'data: {"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}',
  '',
  'event: message_stop',
  'data: {"type":"message_stop"}',
  '',
  '',
].join('\n')

/** The inline committer, keeping the finish jobs it is given; told to, its finish throws (a bug in a dialect's decoder). */
class Committer extends InlineCommitter {
  failFinish = false
  jobs: FinishJob[] = []
  override commit(home: string, ws: string, job: CommitJob, options?: CommitOptions): Promise<string> {
    if (job.finish) this.jobs.push(job.finish)
    const broken =
      this.failFinish && job.finish
        ? { ...job, finish: { ...job.finish, dialect: 'nope' as 'anthropic' } }
        : job
    return super.commit(home, ws, broken, options)
  }
}

let run: StageRun
let committer: Committer
let recorded: Recorded[] = []
beforeEach(() => {
  committer = new Committer()
  run = stageContext(committer)
  recorded = []
})
afterEach(async () => {
  for (const s of recorded) s.settle(commitJob(s, failedForward(new Error('the test ended')), undefined))
  await run.close()
})

function step(): Promise<Recorded> {
  const { ctx } = run
  const request = accepted(anthropic, REQUEST)
  const route = routeTo('anthropic')
  const composed = compose(ctx, request, WHO, route)
  const agent = ctx.agent('w', 'main')
  return agent.critical(async (n) => {
    const held = hold(ctx, request, composed, await ctx.records.previous(agent, n, anthropic))
    const s = record(ctx, { request, who: WHO, route, held }, agent, n)
    recorded.push(s)
    return s
  })
}

const forwarded = (over: Partial<Forwarded> = {}): Forwarded => ({
  outcome: 'ok',
  status: 200,
  headers: { 'content-type': 'application/json', 'request-id': 'req_1', 'set-cookie': 'c=1' },
  body: Buffer.from(ANSWER),
  ttfbMs: 12.345,
  totalMs: 30,
  error: null,
  streamed: false,
  ...over,
})

async function committed(s: Recorded, file: string): Promise<string | undefined> {
  await run.ctx.drain()
  return (await readCommittedFile(s.agent.ws, 'main', s.n, file))?.toString()
}
async function committedMeta(s: Recorded): Promise<JsonObject> {
  return JSON.parse((await committed(s, 'meta.json')) as string) as JsonObject
}

describe('an answer that travelled with its headers', () => {
  it('commits the step with the answer as response.json and the usage, stop reason and headers it found', async () => {
    const s = await step()
    const summary = await finish(run.ctx, s, forwarded())
    expect(summary).toMatchObject({
      status: 200,
      outcome: 'ok',
      stop_reason: 'end_turn',
      response_file: 'response.json',
      usage: { input_tokens: 10, output_tokens: 3, cache_read_tokens: 90 },
      ttfb_ms: 12.35,
    })
    expect(committer.jobs[0]).toMatchObject({
      dialect: 'anthropic',
      answered: { headers: { 'request-id': 'req_1' } },
    })
    expect(await committed(s, 'response.json')).toBe(ANSWER)
    expect(await committed(s, 'request.json')).toBe(REQUEST)
    const meta = await committedMeta(s)
    expect(meta).toMatchObject({
      step: '001',
      status: 200,
      outcome: 'ok',
      stop_reason: 'end_turn',
      response_file: 'response.json',
    })
    expect(meta.response_headers).toEqual({ 'content-type': 'application/json', 'request-id': 'req_1' })
  })

  it('tells the previous record the status, so the hold of the next step knows the provider refused it', async () => {
    const s = await step()
    await finish(
      run.ctx,
      s,
      forwarded({ outcome: 'upstream_error', status: 400, body: Buffer.from('{"type":"error"}') }),
    )
    const previous = await run.ctx.records.previous(s.agent, 2, anthropic)
    expect(previous && 'status' in previous && previous.status).toBe(400)
  })
})

describe('an answer whole in the journal', () => {
  it('is read from the journal, its headers from the HEAD frame, and committed as response.sse', async () => {
    const s = await step()
    s.entry.sent()
    s.entry.chunk(Buffer.from(STREAM.slice(0, 40)))
    s.entry.chunk(Buffer.from(STREAM.slice(40)))
    s.entry.head({
      status: 200,
      headers: { 'content-type': 'text/event-stream; charset=utf-8', 'request-id': 'req_2' },
      ttfb_ms: 5,
      total_ms: 80,
      ended_at: '2026-12-02T00:00:05.000Z',
    })
    const summary = await finish(
      run.ctx,
      s,
      forwarded({ headers: {}, body: Buffer.alloc(0), streamed: true }),
    )
    expect(committer.jobs[0]?.answered).not.toHaveProperty('headers')
    expect(committer.jobs[0]).not.toHaveProperty('answer')
    expect(summary).toMatchObject({
      response_file: 'response.sse',
      stop_reason: 'tool_use',
      usage: { cache_read_tokens: 100, output_tokens: 9 },
    })
    expect(await committed(s, 'response.sse')).toBe(STREAM)
    const meta = await committedMeta(s)
    expect(meta).toMatchObject({
      ended_at: '2026-12-02T00:00:05.000Z',
      response_headers: { 'request-id': 'req_2' },
    })
  })
})

describe('no answer', () => {
  it('commits the step with the error and no response file when the provider was never reached', async () => {
    const s = await step()
    const error = {
      code: 'UPSTREAM_UNREACHABLE',
      message: 'provider row "anthropic" at http://127.0.0.1:9 could not be reached: connect ECONNREFUSED',
    }
    const summary = await finish(
      run.ctx,
      s,
      forwarded({
        outcome: 'unreachable',
        status: null,
        headers: {},
        body: Buffer.alloc(0),
        ttfbMs: null,
        error,
      }),
    )
    expect(summary).toMatchObject({
      status: null,
      outcome: 'unreachable',
      error,
      usage: null,
      response_file: null,
    })
    for (const f of ['response.json', 'response.sse', 'response.txt'])
      expect(await committed(s, f)).toBeUndefined()
    expect(await committedMeta(s)).toMatchObject({ outcome: 'unreachable', error, ttfb_ms: null })
  })
})

describe('a finish that fails', () => {
  it('still commits the step with the meta as the forward knew it, the error named and the answer raw', async () => {
    committer.failFinish = true
    const s = await step()
    const summary = await finish(run.ctx, s, forwarded())
    expect(summary).toMatchObject({ status: 200, outcome: 'ok', response_file: 'response.txt' })
    expect(summary.error?.code).toBe('INTERNAL')
    expect(await committed(s, 'response.txt')).toBe(ANSWER)
    expect(await committed(s, 'response.json')).toBeUndefined()
    const meta = await committedMeta(s)
    expect(meta).toMatchObject({ status: 200, outcome: 'ok', ttfb_ms: 12.35, total_ms: 30 })
    expect(meta).not.toHaveProperty('usage')
  })
})

describe("the step's commit job", () => {
  it('is where the step is in the journal and how the forward went: an answer that travelled goes with its bytes and headers', async () => {
    const s = await step()
    const f = forwarded()
    expect(commitJob(s, f, undefined)).toEqual({
      agent: 'main',
      n: 1,
      model: 'claude-sonnet-4-5',
      request: s.entry.place,
      finish: {
        dialect: 'anthropic',
        place: s.entry.place,
        answered: {
          outcome: 'ok',
          status: 200,
          headers: f.headers,
          ttfbMs: 12.345,
          totalMs: 30,
          error: null,
        },
        answer: { bytes: f.body },
        prices: undefined,
      },
    })
  })

  it('when the forward itself threw, is committed as interrupted with the error and no answer', async () => {
    const s = await step()
    const summary = await finish(run.ctx, s, failedForward(new Error('boom')))
    expect(summary).toMatchObject({ status: null, outcome: 'interrupted', response_file: null })
    expect(summary.error).toEqual({ code: 'INTERNAL', message: 'forwarding this step failed: boom' })
  })
})
