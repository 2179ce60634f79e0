/**
 * `why`'s cause where only the clock or the provider's side can explain a miss, on steps recorded
 * through the proxy against the fake (no diagnostics asked), read back with a fake clock: the
 * records' timestamps moved, the reads collapsed as the provider would report them. A 6-minute gap
 * is `ttl_expired_5m`, a 2-hour gap over 1-hour writes `ttl_expired_1h`, a gap within the lifetime
 * with the prefix sent byte-identical is `likely_server_side`, never guessed as a change; an
 * attempt's first step is `fork`.
 */
import type { StepMeta } from '../../../generated/meta'
import type { JsonObject } from '../../../proxy/core/json'
import { readStepFile, readStepMeta, readStepRequest } from '../../../proxy/record/read'
import { REQUEST_FILE } from '../../../proxy/core/layout'
import { whyOf } from '../../../proxy/report/why'
import { startProxy, type Proxy } from '../../support/harness'
import { mainStep, sendStep } from '../../support/view-demo'

let p: Proxy
let prev: StepMeta
let cur: StepMeta
let curBody: JsonObject
let prevBytes: Buffer

beforeAll(async () => {
  p = await startProxy()
  expect((await sendStep(p, 'clock', 'main', mainStep(1, ['Read', 'Write']))).status).toBe(200)
  expect((await sendStep(p, 'clock', 'main', mainStep(2, ['Read', 'Write']))).status).toBe(200)
  await p.settled()
  const ws = p.server.ctx.workspace('clock')
  prev = (await readStepMeta(ws, 'main', 1))!
  cur = (await readStepMeta(ws, 'main', 2))!
  curBody = (await readStepRequest(ws, 'main', 2))!.body
  prevBytes = (await readStepFile(ws, 'main', 1, REQUEST_FILE))!
})
afterAll(() => p.close())

/** Step 002 as if it came `gapMs` after 001 ended and read nothing of its prefix. */
function collapsedAfter(gapMs: number, before: StepMeta = prev): ReturnType<typeof whyOf> {
  const ended = Date.parse(before.ended_at ?? before.started_at)
  const u = cur.usage!
  const meta: StepMeta = {
    ...cur,
    started_at: new Date(ended + gapMs).toISOString(),
    usage: { ...u, cache_read_tokens: 0, cache_write_tokens: u.cache_read_tokens + u.cache_write_tokens },
  }
  return whyOf({ n: 2, meta, cur: curBody, prevMeta: before, prevBytes })
}

test('the recorded pair reads its prefix as the previous step left it', () => {
  expect(whyOf({ n: 2, meta: cur, cur: curBody, prevMeta: prev, prevBytes }).cause).toBe('no_miss')
})

test('a 6-minute gap with collapsed reads is ttl_expired_5m', () => {
  expect(collapsedAfter(6 * 60_000).cause).toBe('ttl_expired_5m')
})

test('a 2-hour gap after 1-hour writes is ttl_expired_1h; 30 minutes after them is no expiry', () => {
  const u = prev.usage!
  const long: StepMeta = { ...prev, usage: { ...u, cache_write_1h_tokens: u.cache_write_tokens } }
  expect(collapsedAfter(2 * 60 * 60_000, long).cause).toBe('ttl_expired_1h')
  expect(collapsedAfter(30 * 60_000, long).cause).toBe('likely_server_side')
})

test('identical prefix bytes within the lifetime with collapsed reads is likely_server_side, said as such', () => {
  const r = collapsedAfter(10_000)
  expect(r.cause).toBe('likely_server_side')
  expect(r.cause_lines[0]).toBe(
    'cause: likely_server_side: the prefix sent was byte-identical, yet the reads collapsed: likely the provider’s side',
  )
})

test('an attempt’s first step is fork', () => {
  const meta: StepMeta = { ...prev, agent: 'main-20261207T100000Z-k3f9' }
  expect(whyOf({ n: 1, meta, cur: curBody, prevMeta: undefined, prevBytes: undefined }).cause).toBe('fork')
})
