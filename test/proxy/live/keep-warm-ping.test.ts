/**
 * live/keep-warm-ping: a ping is the recorded request's bytes with max_tokens 1 and no stream
 * spliced in (nothing else re-serialized), sent with the version and cache-keying headers the
 * step went with, and its own header (recorded, never sent upstream); a row without api_key_env is not pinged (no key was recorded) and says so once.
 */
import pino from 'pino'
import { Writable } from 'node:stream'
import { pingSender } from '../../../proxy/live/keep-warm-ping'
import { readStepMeta } from '../../../proxy/record/read'
import { startProxy, type Proxy } from '../../support/harness'
import { postAnthropic } from '../../support/raw-http'

let p: Proxy
const ODD =
  '{ "model":"claude-fake-1" , "max_tokens": 64, "stream":true,\n "messages":[{"role":"user","content":"caf\\u00e9"}] }'
beforeAll(async () => {
  p = await startProxy()
  const r = await postAnthropic(p.url, '/w/ping/a/main/v1/messages', ODD, {
    'anthropic-beta': 'some-cache-beta-2026',
  })
  expect(r.status).toBe(200)
  await p.settled()
})
afterAll(() => p.close())

test('a row without api_key_env is not pinged, and says so once', async () => {
  const lines: string[] = []
  const log = pino({ level: 'warn' }, new Writable({ write: (c, _e, cb) => (lines.push(String(c)), cb()) }))
  const ctx = Object.assign(Object.create(p.server.ctx) as typeof p.server.ctx, { log })
  const ping = pingSender(ctx, p.url, p.token)
  const before = p.fake.received.length
  await ping({ ws: 'ping', agent: 'main', n: 1 })
  await ping({ ws: 'ping', agent: 'main', n: 1 })
  expect(p.fake.received.length).toBe(before)
  expect(lines.filter((l) => l.includes('has no api_key_env'))).toHaveLength(1)
})

test('a ping is the recorded bytes with max_tokens 1 and stream false spliced in, and the step’s headers', async () => {
  const keyed = { ...p.server.ctx.config.providers.anthropic, api_key_env: 'HF_PING_KEY' }
  process.env.HF_PING_KEY = 'sk-ping'
  const config = { ...p.server.ctx.config, providers: { ...p.server.ctx.config.providers, anthropic: keyed } }
  const ctx = Object.assign(Object.create(p.server.ctx) as typeof p.server.ctx, { config })
  await pingSender(ctx, p.url, p.token)({ ws: 'ping', agent: 'main', n: 1 }).catch(() => undefined)
  const got = p.fake.received.at(-1)!
  expect(got.url).toBe('/v1/messages')
  expect(got.body.toString()).toBe(
    '{ "model":"claude-fake-1" , "max_tokens": 1, "stream":false,\n "messages":[{"role":"user","content":"caf\\u00e9"}] }',
  )
  expect(got.headers['anthropic-beta']).toBe('some-cache-beta-2026')
  // What it is goes into its record, never upstream.
  expect(got.headers['x-holdfast-keep-warm']).toBeUndefined()
  await p.settled()
  const meta = await readStepMeta(p.server.ctx.workspace('ping'), 'main.aux', 1)
  expect(meta?.request_headers['x-holdfast-keep-warm']).toBe('001')
})
