/**
 * `holdfast replay`: a plugin's deciding hooks over a conversation recorded through the proxy,
 * as a table and as JSON; options from --options or from holdfast.yaml (found by the plugin's
 * declared name); identify sees the address the client used; a throwing hook is reported per
 * step and makes the command exit 1. Nothing is sent and the home is not changed.
 */
import fs from 'node:fs'
import path from 'node:path'
import { startProxy, type Proxy } from '../support/harness'
import { cliAsync, type Run } from '../support/repo-checks'
import { ask, EXAMPLE, fixture, post, postFixture } from '../plugins/support'

let p: Proxy
const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i}`).join(' ')
// It writes into its data directory at setup: replay must hand it a scratch one, not <home>/plugins.
const THROWS = `module.exports = { name: 'flaky', apiVersion: 1, setup: (ctx) => {
  require('fs').mkdirSync(ctx.dataDir, { recursive: true })
  require('fs').writeFileSync(require('path').join(ctx.dataDir, 'seen'), 'x')
  return { route(ex) { if (ex.summary.messageCount > 1) throw new Error('cannot route a follow-up') } }
} }\n`

let runs: Run[]
beforeAll(async () => {
  p = await startProxy()
  const base = `${p.url}/w/rp/a/main`
  const first = { role: 'user', content: 'summarize the design' }
  expect((await post(base, ask('summarize the design'))).status).toBe(200)
  const turn2 = [first, { role: 'assistant', content: 'ok' }, { role: 'user', content: words(400) }]
  expect((await post(base, { ...ask(''), messages: turn2 })).status).toBe(200)
  expect((await postFixture(base, fixture('2.1.197/plain/title'))).status).toBe(200) // lands on main.aux
  await p.settled()
  // After recording: list the example with its options (the running server read its config already).
  const yaml = JSON.parse(fs.readFileSync(path.join(p.home, 'holdfast.yaml'), 'utf8')) as object
  const plugins = [{ path: EXAMPLE, options: { threshold: 300, role: 'long' } }]
  fs.writeFileSync(path.join(p.home, 'holdfast.yaml'), JSON.stringify({ ...yaml, plugins }))
  fs.writeFileSync(path.join(p.home, 'flaky.cjs'), THROWS)
  const home = ['--home', p.home]
  runs = await Promise.all([
    cliAsync(['replay', '--plugin', path.relative(process.cwd(), EXAMPLE), 'rp', 'main', ...home]),
    cliAsync(['replay', '--plugin', 'long-context', 'rp', 'main', '--json', ...home]),
    cliAsync([
      'replay',
      '--plugin',
      EXAMPLE,
      '--options',
      '{"role":"huge","threshold":5}',
      'rp',
      'main',
      '--json',
      ...home,
    ]),
    cliAsync(['replay', '--plugin', 'claude-code', 'rp', 'main.aux', '--json', ...home]),
    cliAsync(['replay', '--plugin', path.join(p.home, 'flaky.cjs'), 'rp', 'main', '--json', ...home]),
  ])
}, 40_000)
afterAll(() => p.close())

describe('holdfast replay', () => {
  it("prints, per recorded step, what the plugin's hooks would decide", () => {
    const [table] = runs
    expect([table!.code, table!.stderr]).toEqual([0, ''])
    const lines = table!.stdout.trimEnd().split('\n')
    expect(lines[0]).toBe('plugin long-context over rp/main: what it would decide (nothing is sent)')
    expect(lines[1]).toMatch(/^NNN\s+~tokens\s+recorded\s+identify\s+route\s+why$/)
    expect(lines[2]).toMatch(/^001\s+\d+\s+main claude-sonnet-4-5\s+-\s+-\s+-$/)
    expect(lines[3]).toMatch(/^002\s+\d+\s+main claude-sonnet-4-5\s+-\s+role long\s+~\d+ tokens ≥ 300$/)
    expect(lines).toHaveLength(4)
  })

  it('uses the options holdfast.yaml gives the plugin, found by its declared name, or --options', () => {
    const [, configured, given] = runs
    expect(configured!.code).toBe(0)
    const rows = JSON.parse(configured!.stdout) as { step: string; route: unknown; approx_tokens: number }[]
    expect(rows.map((r) => [r.step, r.route])).toEqual([
      ['001', null],
      ['002', { role: 'long', why: `~${rows[1]!.approx_tokens} tokens ≥ 300` }],
    ])
    const all = JSON.parse(given!.stdout) as { route: { role: string } }[]
    expect(all.map((r) => r.route.role)).toEqual(['huge', 'huge'])
  })

  it('shows identify the address the client used, so a built-in replays its own split', () => {
    const [, , , cc] = runs
    expect(cc!.code).toBe(0)
    const rows = JSON.parse(cc!.stdout) as { recorded: { agent: string }; identify: unknown }[]
    expect(rows).toEqual([
      expect.objectContaining({
        recorded: expect.objectContaining({ agent: 'main.aux' }) as unknown,
        identify: {
          agent: 'main.aux',
          why: expect.stringMatching(/^claude-code: no tools and a short system prompt/) as unknown,
        },
      }),
    ])
  })

  it('reports a throwing hook on its step and exits 1 (live, that step would have failed closed)', () => {
    const flaky = runs[4]!
    expect(flaky.code).toBe(1)
    const rows = JSON.parse(flaky.stdout) as { step: string; error: unknown }[]
    expect(rows.map((r) => [r.step, r.error])).toEqual([
      ['001', null],
      ['002', { hook: 'route', message: 'plugin flaky (route) failed: cannot route a follow-up' }],
    ])
  })

  it('changes nothing in the home and sends nothing', () => {
    expect(fs.existsSync(path.join(p.home, 'plugins'))).toBe(false)
    expect(p.fake.received).toHaveLength(3)
  })
})
