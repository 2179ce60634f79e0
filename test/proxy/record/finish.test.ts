/** The finish half (store/finish): decoded, read for usage, priced and written, whatever thread it arrives on. */
import fs from 'node:fs'
import path from 'node:path'
import zlib from 'node:zlib'
import { completeFinish, type FinishJob } from '../../../proxy/record/finish'
import type { StepMeta } from '../../../generated/meta'
import { tempHome } from '../../support/harness'

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
  hold: { applied: false, reason: 'first-step', held: [] },
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

function job(dir: string, body: Uint8Array, encoding = ''): FinishJob {
  return {
    dir,
    dialect: 'anthropic',
    meta,
    body: body as Buffer,
    contentType: 'application/json',
    contentEncoding: encoding,
    holdApplied: true,
    prices: undefined,
  }
}

describe('the finish half', () => {
  it('reads usage from a body that arrived as a plain Uint8Array (a worker message), and writes the decoded answer', () => {
    const dir = tempHome()
    const gz = zlib.gzipSync(answer)
    const m = completeFinish(job(dir, new Uint8Array(gz), 'gzip'))
    expect(m).toMatchObject({
      stop_reason: 'end_turn',
      response_file: 'response.json',
      usage: { input_tokens: 10, cache_read_tokens: 100 },
    })
    expect(m.cost?.saved_by_hold_usd).toBeGreaterThan(0)
    expect(fs.readFileSync(path.join(dir, 'response.json'), 'utf8')).toBe(answer)
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'meta.json'), 'utf8'))).toEqual(m)
    fs.rmSync(dir, { recursive: true, force: true })
  })

  it('keeps a body it cannot decode raw, and says so', () => {
    const dir = tempHome()
    const m = completeFinish(job(dir, Buffer.from('not gzip'), 'gzip'))
    expect(m.error).toMatchObject({ code: 'RESPONSE_UNDECODABLE' })
    expect(fs.readFileSync(path.join(dir, 'response.json'), 'utf8')).toBe('not gzip')
    fs.rmSync(dir, { recursive: true, force: true })
  })
})
