/**
 * The tool hosts against real MCP servers (the fixture host over stdio, and over streamable HTTP
 * in this process): paging, the stored advertisement, the child's environment and stderr,
 * deadlines, hosts that die or change under a call, list_changed, backoff, and shutdown.
 */
import fs from 'node:fs'
import path from 'node:path'
import * as say from '../../../proxy/core/tool-sentences'
import { readAdvertisement } from '../../../proxy/tools/advertisement'
import { CATALOGUE } from '../../fixtures/mcp/host'
import { startHttpHost, type HttpHost } from '../../fixtures/mcp/http-host'
import { eventually } from '../../support/harness'
import { ToolHosts } from '../../../proxy/tools/hosts'
import {
  alive,
  capturingLogger,
  closeAll,
  configWith,
  hostsFor,
  stdioClient,
  tempDir,
  textOf,
} from './support'

const ALL = CATALOGUE.map((t) => t.name)
const sharedHome = tempDir()
const homes: string[] = [sharedHome]
afterEach(closeAll)
afterAll(() => homes.forEach((h) => fs.rmSync(h, { recursive: true, force: true })))

describe('a stdio tool host', () => {
  // One host for the tests that change nothing in it: paged by 2, a 500 ms deadline, env given.
  const captured = capturingLogger()
  let shared: ToolHosts
  beforeAll(() => {
    process.env.HOLDFAST_TEST_INHERITED = 'inherited'
    process.env.HOLDFAST_TOKEN = 'a-secret-token-of-holdfast'
    shared = new ToolHosts(
      sharedHome,
      () =>
        configWith({
          fx: stdioClient(
            { FIXTURE_PAGE_SIZE: '2', HOLDFAST_TEST_CONFIGURED: 'configured' },
            { timeout_ms: 500 },
          ),
        }),
      captured.log,
    )
  })
  afterAll(async () => {
    delete process.env.HOLDFAST_TEST_INHERITED
    delete process.env.HOLDFAST_TOKEN
    await shared.close()
  })

  it('lists every page of a paginated tools/list and stores the advertisement, "" for a missing description', async () => {
    const v = await shared.view('fx')
    expect(v?.tools.map((t) => t.name)).toEqual(ALL)
    expect(v?.tools.find((t) => t.name === 'plain')?.description).toBe('')
    expect([v?.connected, v?.error, v?.transport]).toEqual([true, null, 'stdio'])
    expect(readAdvertisement(sharedHome, 'fx')?.tools).toEqual(v?.tools)
  })

  it("gives the child holdfast's environment merged with the configured env, without HOLDFAST_TOKEN", async () => {
    const ask = async (name: string) => textOf(await shared.call('fx', 'env', { name }))
    expect([
      await ask('HOLDFAST_TEST_INHERITED'),
      await ask('HOLDFAST_TEST_CONFIGURED'),
      await ask('HOLDFAST_TOKEN'),
    ]).toEqual(['inherited', 'configured', '(unset)'])
  })

  it("logs the child's stderr line by line under the client's name", async () => {
    expect(textOf(await shared.call('fx', 'stderr', { text: 'a line on stderr' }))).toBe('written')
    await eventually(
      () => captured.lines.some((l) => l.stderr === 'a line on stderr' && l.client === 'fx'),
      3000,
      'the line',
    )
  })

  it('answers in band, at the deadline, a call the host does not answer in time', async () => {
    const t0 = Date.now()
    const r = await shared.call('fx', 'sleep', { ms: 10_000 })
    expect(Date.now() - t0).toBeLessThan(2500)
    expect(r).toEqual({ content: [{ type: 'text', text: say.timedOut('fx', 'sleep', 500) }], is_error: true })
    expect(textOf(await shared.call('fx', 'echo', { text: 'still here' }))).toBe('still here')
  })

  it('checks output schemas of tools on every page, refusing a mismatch in band', async () => {
    const r = await shared.call('fx', 'shape', {})
    expect(r.is_error).toBe(true)
    expect(textOf(r)).toMatch(/^client "fx" refused the call to "shape": .*output schema/)
  })

  it("answers a tool's own failure as is_error with the tool's content", async () => {
    expect(await shared.call('fx', 'fail', {})).toEqual({
      content: [{ type: 'text', text: 'it failed on purpose' }],
      is_error: true,
    })
  })

  it('refuses in band, without calling it, a tool the host stopped advertising', async () => {
    const dir = tempDir()
    homes.push(dir)
    const file = path.join(dir, 'advertise.json')
    fs.writeFileSync(file, JSON.stringify(ALL))
    const hosts = hostsFor({ fx: stdioClient({ FIXTURE_ADVERTISE: file }) })
    expect((await hosts.view('fx'))?.tools).toHaveLength(ALL.length)
    fs.writeFileSync(file, JSON.stringify(ALL.filter((n) => n !== 'echo')))
    expect(await hosts.call('fx', 'echo', { text: 'x' })).toEqual({
      content: [{ type: 'text', text: say.notAdvertised('fx', 'echo') }],
      is_error: true,
    })
    expect(readAdvertisement(hosts.home, 'fx')?.tools.map((t) => t.name)).not.toContain('echo')
  })

  it('answers in band when the host dies mid-call, and starts it again on the next use', async () => {
    const hosts = hostsFor({ fx: stdioClient() })
    const pid = Number(textOf(await hosts.call('fx', 'pid', {})))
    const r = await hosts.call('fx', 'die', {})
    expect(r.is_error).toBe(true)
    expect(textOf(r)).toMatch(/^client "fx" went away during the call to "die": /)
    const again = Number(textOf(await hosts.call('fx', 'pid', {})))
    expect(again).not.toBe(pid)
    expect(alive(pid)).toBe(false)
  })

  it('stores the new advertisement when the host announces list_changed, and refuses what it dropped', async () => {
    const hosts = hostsFor({ fx: stdioClient({ FIXTURE_LIST_CHANGED: '1' }) })
    expect(textOf(await hosts.call('fx', 'changed', { advertise: ['echo', 'changed'] }))).toBe('changed')
    await eventually(
      () => readAdvertisement(hosts.home, 'fx')?.tools.length === 2,
      5000,
      'the refreshed advertisement',
    )
    expect(textOf(await hosts.call('fx', 'shout', { text: 'x' }))).toBe(say.notAdvertised('fx', 'shout'))
  })

  it('keeps the last stored advertisement of a host that is down, and waits longer after each failure', async () => {
    const up = hostsFor({ fx: stdioClient() })
    await up.view('fx')
    await up.close()
    const down = hostsFor(
      { fx: { mcp: { command: path.join(up.home, 'no-such-host') } } },
      { home: up.home, timings: { backoff: { baseMs: 60_000, maxMs: 60_000 } } },
    )
    const v = await down.view('fx')
    expect([v?.connected, v?.tools.length, v?.error]).toEqual([
      false,
      ALL.length,
      expect.stringMatching(/ENOENT/),
    ])
    const second = textOf(await down.call('fx', 'echo', { text: 'x' })) // at once: the first retry does not wait
    expect(second).toMatch(/^client "fx" cannot be reached right now: .*ENOENT/)
    const third = textOf(await down.call('fx', 'echo', { text: 'x' }))
    expect(third).toMatch(/next attempt in \d+ ms$/)
    expect(readAdvertisement(up.home, 'fx')?.tools).toHaveLength(ALL.length)
  })

  it('kills every child at close, even one in the middle of a call', async () => {
    const hosts = hostsFor({ fx: stdioClient() })
    const pid = Number(textOf(await hosts.call('fx', 'pid', {})))
    const pending = hosts.call('fx', 'sleep', { ms: 30_000 })
    await new Promise((r) => setTimeout(r, 100))
    await hosts.close()
    expect((await pending).is_error).toBe(true)
    await eventually(() => !alive(pid), 3000, 'the child to exit')
    expect(textOf(await hosts.call('fx', 'echo', { text: 'x' }))).toMatch(/shutting down/)
  })
})

describe('a streamable HTTP tool host', () => {
  let host: HttpHost
  beforeAll(async () => {
    host = await startHttpHost({ pageSize: 4, listChanged: true })
  })
  afterAll(() => host.close())

  it('is listed page by page and called, with the configured headers on every request', async () => {
    const hosts = hostsFor({ web: { mcp: { url: host.url, headers: { 'x-fixture': 'yes' } } } })
    const v = await hosts.view('web')
    expect([v?.transport, v?.connected, v?.tools.map((t) => t.name)]).toEqual(['http', true, ALL])
    expect(await hosts.call('web', 'echo', { text: 'over http' })).toEqual({
      content: [{ type: 'text', text: 'over http' }],
      is_error: false,
    })
    expect(host.headers.length).toBeGreaterThan(0)
    expect(host.headers.every((h) => h['x-fixture'] === 'yes')).toBe(true)
  })

  it('answers in band when the host drops mid-call, and opens a new session on the next use', async () => {
    const hosts = hostsFor({ web: { mcp: { url: host.url } } })
    expect(textOf(await hosts.call('web', 'echo', { text: 'one' }))).toBe('one')
    const r = await hosts.call('web', 'die', {})
    expect(r.is_error).toBe(true)
    expect(textOf(r)).toMatch(/^client "web" went away during the call to "die"/)
    expect(textOf(await hosts.call('web', 'echo', { text: 'two' }))).toBe('two')
  })

  it('stores the new advertisement when the host announces list_changed on its event stream', async () => {
    const hosts = hostsFor({ web: { mcp: { url: host.url } } })
    await hosts.view('web')
    expect(textOf(await hosts.call('web', 'changed', { advertise: ['echo', 'changed', 'pid'] }))).toBe(
      'changed',
    )
    await eventually(() => readAdvertisement(hosts.home, 'web')?.tools.length === 3, 5000, 'the new list')
  })

  it('answers in band when nothing listens at the URL', async () => {
    const hosts = hostsFor({ web: { mcp: { url: 'http://127.0.0.1:9/mcp' } } })
    expect(textOf(await hosts.call('web', 'echo', { text: 'x' }))).toMatch(
      /^client "web" cannot be reached right now: /,
    )
  })
})
