/** The finish half (record/finish): decoded, read for usage and priced, whatever thread it arrives on; nothing copied that need not be. */
import fs from 'node:fs'
import path from 'node:path'
import zlib from 'node:zlib'
import { answerBytes, finishStep, type FinishJob } from '../../../proxy/record/finish'
import { Journal } from '../../../proxy/record/journal/writer'
import type { StepMeta } from '../../../generated/meta'
import { tempHome } from '../../support/harness'
import { schemaValidator } from '../../../proxy/store/config/schemas'

const meta = {
  version: 1,
  workspace: 'w',
  agent: 'a',
  step: '001',
  dialect: 'anthropic',
  endpoint: '/v1/messages',
  started_at: '2026-12-02T00:00:00Z',
  route: { provider: 'anthropic', url: 'http://x/v1/messages', model: 'claude-sonnet-4-5' },
  request_headers: {},
  cache_keying_headers: {},
  hold: { applied: true, reason: 'applied', held: ['Gone'] },
  injected_tools: [],
  changes: [],
  request_bytes: 2,
  status: 200,
  outcome: 'ok',
  error: null,
} as StepMeta
const answer = JSON.stringify({
  content: [],
  stop_reason: 'end_turn',
  usage: { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 100, cache_creation_input_tokens: 0 },
})

function job(body: Uint8Array, encoding = ''): FinishJob {
  return {
    dialect: 'anthropic',
    meta,
    answered: {
      outcome: 'ok',
      status: 200,
      headers: { 'content-type': 'application/json', ...(encoding ? { 'content-encoding': encoding } : {}) },
      ttfbMs: 1,
      totalMs: 2,
      error: null,
    },
    answer: { bytes: body as Buffer },
    prices: undefined,
  }
}

describe('the finish half', () => {
  it('reads usage from a body that arrived as a plain Uint8Array (a worker message), and keeps the decoded answer', () => {
    const gz = zlib.gzipSync(answer)
    const f = finishStep(job(new Uint8Array(gz), 'gzip'))
    expect(f.meta).toMatchObject({
      stop_reason: 'end_turn',
      response_file: 'response.json',
      usage: { input_tokens: 10, cache_read_tokens: 100 },
    })
    expect(f.meta.cost?.saved_by_hold_usd).toBeGreaterThan(0)
    expect(f.response?.file).toBe('response.json')
    expect(answerBytes(f.response!.bytes).toString()).toBe(answer)
  })

  it('keeps a body it cannot decode raw, and says so', () => {
    const f = finishStep(job(Buffer.from('not gzip'), 'gzip'))
    expect(f.meta.error).toMatchObject({ code: 'RESPONSE_UNDECODABLE' })
    expect(answerBytes(f.response!.bytes).toString()).toBe('not gzip')
  })

  it('reads a streamed answer where the journal has it, and points the commit there instead of copying it', () => {
    const dir = tempHome()
    const journal = new Journal(false)
    const entry = journal.agent(path.join(dir, 'a')).send(1, meta, Buffer.from('{}'))
    entry.sent()
    entry.chunk(Buffer.from(answer.slice(0, 20)))
    entry.chunk(Buffer.from(answer.slice(20)))
    entry.head({
      status: 200,
      headers: { 'content-type': 'application/json' },
      ttfb_ms: 1,
      total_ms: 2,
      ended_at: 'now',
    })
    journal.close()
    // Only where the step is and how the forward went cross threads: the rest is read from the journal.
    const f = finishStep({
      dialect: 'anthropic',
      place: entry.place,
      answered: { outcome: 'ok', status: 200, ttfbMs: 1, totalMs: 2, error: null },
      prices: undefined,
    })
    expect(f.meta).toMatchObject({ workspace: 'w', step: '001', status: 200, response_file: 'response.json' })
    expect(f.meta.usage).toMatchObject({ output_tokens: 5 })
    expect(f.response?.bytes).toEqual({ file: entry.place.file, extents: entry.place.chunks })
    expect(answerBytes(f.response!.bytes).toString()).toBe(answer)
    fs.rmSync(dir, { recursive: true, force: true })
  })
})

describe("the provider's word and the model that served", () => {
  const asked = { ...meta, provider_cache: { asked: true, compared_with: 'msg_1' } } as StepMeta
  const withMeta = (m: StepMeta, body: string): FinishJob => ({ ...job(Buffer.from(body)), meta: m })

  it('records the answer id, the served model and the diagnostics verbatim beside the id the request named', () => {
    const diagnostics = { cache_miss_reason: { type: 'system_changed', cache_missed_input_tokens: 4100 } }
    const body = JSON.stringify({
      ...JSON.parse(answer),
      type: 'message',
      id: 'msg_2',
      model: 'claude-sonnet-5',
      diagnostics,
    })
    const f = finishStep(withMeta(asked, body))
    expect(f.meta.answer_id).toBe('msg_2')
    expect(f.meta.served_model).toBe('claude-sonnet-5')
    expect(f.meta.route.model).toBe('claude-sonnet-4-5')
    expect(f.meta.provider_cache).toEqual({
      asked: true,
      compared_with: 'msg_1',
      said: 'reason',
      reason: 'system_changed',
      missed_input_tokens: 4100,
      raw: diagnostics,
    })
    expect(schemaValidator('meta')(structuredClone(f.meta))).toBe(true)
  })

  it('records that the provider said nothing when the answer carried no verdict', () => {
    const f = finishStep(withMeta(asked, answer))
    expect(f.meta.provider_cache).toEqual({
      asked: true,
      compared_with: 'msg_1',
      said: 'nothing',
      reason: null,
      missed_input_tokens: null,
    })
    expect(f.meta.answer_id).toBeNull()
  })

  it('records a step that did not ask as not asked, and nothing said', () => {
    expect(finishStep(withMeta(meta, answer)).meta.provider_cache).toMatchObject({
      asked: false,
      compared_with: null,
      said: 'nothing',
    })
  })
})
