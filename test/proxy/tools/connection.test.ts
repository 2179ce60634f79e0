/**
 * proxy/tools/connection: one tool host's MCP session, against the stdio fixture host and small
 * streamable HTTP hosts in this process. Rules: connected lazily (nothing runs before the first
 * use); listed across every page, a repeated cursor refused; failures typed (refused, timeout,
 * gone) and a tool's own error returned as a result; a host that died is dropped and started again
 * at once; a host that lost the session (HTTP 404) is reconnected and asked once more; reconnects
 * after failures in a row wait base, then double, up to the maximum; `list_changed` clears the
 * listing and tells the owner; `close` is for good and leaves no child, even mid-connect.
 */
import { randomUUID } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import pino from 'pino'
import type { Client } from '../../../generated/holdfast'
import { HostConnection, HostFailure, type Backoff } from '../../../proxy/tools/connection'
import { CATALOGUE, createHost } from '../../fixtures/mcp/host'
import { startHttpHost } from '../../fixtures/mcp/http-host'
import { eventually } from '../../support/harness'
import { alive, capturingLogger, stdioClient, tempDir } from './support'

const silent = pino({ level: 'silent' })
const NO_WAIT: Backoff = { baseMs: 0, maxMs: 0 }
const ALL = CATALOGUE.map((t) => t.name)
const soon = (ms = 10_000): number => Date.now() + ms
const opened: HostConnection[] = []
const dirs: string[] = []

function connection(
  spec: Client,
  opts: { backoff?: Backoff; onListChanged?: () => void; log?: pino.Logger } = {},
) {
  const c = new HostConnection(
    'fx',
    spec,
    opts.log ?? silent,
    opts.backoff ?? NO_WAIT,
    opts.onListChanged ?? (() => undefined),
  )
  opened.push(c)
  return c
}

afterAll(async () => {
  await Promise.all(opened.map((c) => c.close()))
  dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true }))
})

/** The failure `p` rejects with (fails the test when it resolves or throws something else). */
async function failure(p: Promise<unknown>): Promise<HostFailure> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(HostFailure)
  return err as HostFailure
}

const textOf = (r: { content: unknown[] }): string => (r.content[0] as { text: string }).text

describe('a stdio host', () => {
  it('drops a host that died mid-call (gone, listing cleared), starts a new one at the next use, and close kills it for good', async () => {
    const { log, lines } = capturingLogger()
    const c = connection(stdioClient(), { log, backoff: { baseMs: 60_000, maxMs: 60_000 } })
    await c.list(soon())
    const pid = Number(textOf(await c.call('pid', {}, soon())))
    const gone = await failure(c.call('die', {}, soon()))
    expect(gone.kind).toBe('gone')
    expect([c.connected, c.tools, typeof c.lastError]).toEqual([false, undefined, 'string'])
    expect(lines.some((l) => l.level === 40 && l.client === 'fx')).toBe(true)
    // the first reconnect after a failure does not wait, even with a long backoff
    const again = Number(textOf(await c.call('pid', {}, soon())))
    expect(again).not.toBe(pid)
    expect(alive(pid)).toBe(false)
    expect(c.lastError).toBeNull()

    await c.close()
    expect(c.connected).toBe(false)
    expect((await failure(c.ready(soon()))).message).toBe('holdfast is shutting down')
    for (let i = 0; i < 100 && alive(again); i++) await new Promise((r) => setTimeout(r, 20))
    expect(alive(again)).toBe(false)
  })

  it('leaves no child behind when closed while it is still connecting', async () => {
    const dir = tempDir()
    dirs.push(dir)
    const file = path.join(dir, 'calls.log')
    const marker = `holdfast-marker-${randomUUID()}`
    const spec = stdioClient({ FIXTURE_CALL_LOG: file })
    const mcp = spec.mcp as { args: string[] }
    mcp.args = [...mcp.args, marker]
    const c = connection(spec)
    const pending = c.ready(soon())
    await new Promise((r) => setTimeout(r, 20))
    await c.close()
    expect((await failure(pending)).message).toBe('holdfast is shutting down')
    const running = (): boolean =>
      fs.readdirSync('/proc').some((p) => {
        try {
          return /^\d+$/.test(p) && fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(marker)
        } catch {
          return false
        }
      })
    for (let i = 0; i < 100 && running(); i++) await new Promise((r) => setTimeout(r, 20))
    expect(running()).toBe(false)
  })
})

describe('reconnect waits', () => {
  it('retries at once after one failure, then waits base, then doubles, up to the maximum', async () => {
    const dir = tempDir()
    dirs.push(dir)
    const c = connection(
      { mcp: { command: path.join(dir, 'no-such-host') } },
      {
        backoff: { baseMs: 80, maxMs: 200 },
      },
    )
    const attempt = async () => (await failure(c.ready(soon()))).message
    const waitOf = (m: string): number => Number(/next attempt in (\d+) ms$/.exec(m)?.[1] ?? NaN)

    expect(await attempt()).toMatch(/ENOENT/) // 1st failure
    expect(await attempt()).toMatch(/ENOENT/) // tried at once: 2nd failure, next wait 80
    const w1 = waitOf(await attempt())
    expect(w1).toBeGreaterThan(0)
    expect(w1).toBeLessThanOrEqual(80)
    expect(c.lastError).toMatch(/ENOENT/)

    await new Promise((r) => setTimeout(r, w1 + 10))
    expect(await attempt()).toMatch(/ENOENT/) // 3rd failure, next wait 160
    const w2 = waitOf(await attempt())
    expect(w2).toBeGreaterThan(80)
    expect(w2).toBeLessThanOrEqual(160)

    await new Promise((r) => setTimeout(r, w2 + 10))
    expect(await attempt()).toMatch(/ENOENT/) // 4th failure: 320, capped at 200
    const w3 = waitOf(await attempt())
    expect(w3).toBeGreaterThan(160)
    expect(w3).toBeLessThanOrEqual(200)
  })
})

describe('a streamable HTTP host', () => {
  it('starts nothing before the first use, lists every page, and drops the listing when the host says it changed', async () => {
    const host = await startHttpHost({
      make: () => createHost({ pageSize: 3, listChanged: true, die: () => undefined }),
    })
    let changed = 0
    const c = connection({ mcp: { url: host.url } }, { onListChanged: () => changed++ })
    await new Promise((r) => setTimeout(r, 20))
    expect([c.connected, c.tools, c.listChanged, c.lastError, host.initializes()]).toEqual([
      false,
      undefined,
      false,
      null,
      0,
    ])
    await c.ready(soon())
    expect([c.connected, c.listChanged]).toEqual([true, true])
    const tools = await c.list(soon())
    expect(tools.map((t) => t.name)).toEqual(ALL)
    expect(c.tools).toBe(tools)

    // the host says its list changed: the listing is dropped and the owner told
    expect(textOf(await c.call('changed', { advertise: ['echo', 'changed'] }, soon()))).toBe('changed')
    await eventually(() => changed === 1, 3000, 'list_changed to reach the owner')
    expect(c.tools).toBeUndefined()
    expect((await c.list(soon())).map((t) => t.name)).toEqual(['echo', 'changed'])
    await c.close()
    await host.close()
  })

  it('reconnects and asks once more when the host lost the session (404), within one call', async () => {
    const host = await startHttpHost({ make: () => createHost({ die: () => undefined }) })
    try {
      const c = connection({ mcp: { url: host.url } })
      expect(textOf(await c.call('echo', { text: 'one' }, soon()))).toBe('one')
      expect(c.listChanged).toBe(false)
      host.forget()
      expect(textOf(await c.call('echo', { text: 'two' }, soon()))).toBe('two')
      expect([host.initializes(), c.connected, c.lastError]).toEqual([2, true, null])
      await c.close()
    } finally {
      await host.close()
    }
  })

  it("returns a tool's own error as a result, and types a JSON-RPC error as refused and a late answer as timeout", async () => {
    const host = await startHttpHost({ make: () => createHost({ die: () => undefined }) })
    const c = connection({ mcp: { url: host.url } })
    expect(await c.call('fail', {}, soon())).toMatchObject({
      content: [{ type: 'text', text: 'it failed on purpose' }],
      isError: true,
    })
    const refused = await failure(c.call('no-such-tool', {}, soon()))
    expect([refused.kind, refused.message]).toEqual(['refused', expect.stringContaining('no-such-tool')])
    const t0 = Date.now()
    const late = await failure(c.call('sleep', { ms: 600 }, Date.now() + 150))
    expect(late.kind).toBe('timeout')
    expect(Date.now() - t0).toBeLessThan(2000)
    // neither failure cost the session
    expect(c.connected).toBe(true)
    expect(textOf(await c.call('echo', { text: 'still' }, soon()))).toBe('still')
    await c.close()
    await host.close()
  })

  it('refuses a listing whose pages repeat a cursor', async () => {
    const host = await startHttpHost({
      make: () => {
        const s = new Server({ name: 'loop', version: '1' }, { capabilities: { tools: {} } })
        s.setRequestHandler(ListToolsRequestSchema, (req) => ({
          tools: [{ name: `t${req.params?.cursor ?? 0}`, inputSchema: { type: 'object' as const } }],
          nextCursor: req.params?.cursor === undefined ? 'a' : 'b',
        }))
        return s
      },
    })
    try {
      const c = connection({ mcp: { url: host.url } })
      const f = await failure(c.list(soon()))
      expect([f.kind, f.message]).toEqual(['refused', 'tools/list repeated a cursor'])
      expect(c.tools).toBeUndefined()
      await c.close()
    } finally {
      await host.close()
    }
  })
})
