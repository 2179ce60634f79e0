/**
 * `holdfast export --otlp` (proxy/telemetry/backfill): recorded steps go to the OTLP endpoint once
 * each, as the spans a serve would have made, with their recorded times and commits; one agent
 * when named; without an endpoint it refuses in one sentence, sends nothing and writes nothing.
 */
import fs from 'node:fs'
import { startOtlpReceiver, type OtlpReceiver } from '../../support/otlp-receiver'
import { git, startProxy, type Proxy } from '../../support/harness'
import { cliAsync } from '../../support/repo-checks'
import { postAnthropic } from '../../support/raw-http'

let p: Proxy
let r: OtlpReceiver
/** The variables of the environment the CLI runs in, without any OTEL_* of this one. */
const env = (extra: Record<string, string>): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const k of Object.keys(process.env)) if (k.startsWith('OTEL_')) out[k] = ''
  return { ...out, ...extra }
}

beforeAll(async () => {
  p = await startProxy()
  const body = (c: string) =>
    JSON.stringify({ model: 'claude-fake-1', max_tokens: 8, messages: [{ role: 'user', content: c }] })
  for (const [agent, c] of <[string, string][]>[
    ['main', 'one'],
    ['main', 'two'],
    ['main', 'three'],
    ['other', 'four'],
  ])
    expect((await postAnthropic(p.url, `/w/hist/a/${agent}/v1/messages`, body(c))).status).toBe(200)
  await p.settled()
  await p.stop()
  r = await startOtlpReceiver()
})
afterAll(async () => {
  await r.close()
  await p.close()
})

test('export --otlp sends every committed step once as its span, with its recorded times and commit', async () => {
  const out = await cliAsync(
    ['export', '--otlp', 'hist', '--home', p.home],
    env({ OTEL_EXPORTER_OTLP_ENDPOINT: r.url }),
    60_000,
  )
  expect(out.code).toBe(0)
  expect(out.stdout).toMatch(/^sent 4 step spans of hist to .*: 4 exported, 0 failed, 0 dropped\n$/)
  const spans = await r.waitForSpans(4)
  expect(spans).toHaveLength(4)
  const main1 = spans.find(
    (s) => s.attributes['holdfast.agent'] === 'main' && s.attributes['holdfast.step'] === '001',
  )!
  const meta = JSON.parse(git(p.repo('hist'), 'show', 'agents/main:steps/main/001/meta.json')) as {
    started_at: string
    ended_at: string
  }
  expect(main1.name).toBe('chat claude-fake-1')
  expect(main1.startNs).toBe(BigInt(Date.parse(meta.started_at)) * 1_000_000n)
  expect(main1.endNs).toBe(BigInt(Date.parse(meta.ended_at)) * 1_000_000n)
  const commit = git(p.repo('hist'), 'log', '--format=%H %s', 'agents/main')
    .split('\n')
    .find((l) => l.includes('step 001'))
    ?.split(' ')[0]
  expect(main1.attributes['holdfast.commit']).toBe(commit)
  // No prompt text on any span.
  for (const s of spans) expect(JSON.stringify(s.attributes)).not.toContain('three')
})

test('export --otlp with an agent sends only that agent’s steps', async () => {
  const before = r.spans().length
  const out = await cliAsync(
    ['export', '--otlp', 'hist', 'other', '--home', p.home],
    env({ OTEL_EXPORTER_OTLP_ENDPOINT: r.url }),
    60_000,
  )
  expect(out.code).toBe(0)
  const spans = (await r.waitForSpans(before + 1)).slice(before)
  expect(spans.map((s) => s.attributes['holdfast.agent'])).toEqual(['other'])
})

test('export --otlp without an endpoint refuses in one sentence, sends nothing and writes nothing', async () => {
  const before = r.requests
  const files = (): string[] => fs.readdirSync(p.home, { recursive: true }).map(String).sort()
  const had = files()
  const out = await cliAsync(['export', '--otlp', 'hist', '--home', p.home], env({}), 60_000)
  expect(out.code).toBe(1)
  expect(out.stderr).toMatch(/--otlp needs an endpoint: set OTEL_EXPORTER_OTLP_ENDPOINT/)
  expect(r.requests).toBe(before)
  expect(files()).toEqual(had) // and nothing written to the home
})
