/**
 * proxy/live/context.ts, what a running server holds: one Workspace and one AgentState per name, made
 * on first use and without touching the disk; one roles reader per workspace; the settings it takes
 * from holdfast.yaml (hold TTLs, body limit, gc cadence) with their defaults; the tool hosts and
 * MCP endpoint made only when first asked for, reading the config as it is now; and the requests
 * in flight, which `drain` waits for (those tracked while it waits too), then every queued commit.
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { ServerContext } from '../../../proxy/live/context'
import { CACHE_TTL_MS, LONG_CACHE_TTL_MS } from '../../../proxy/core/hold'
import { silentLogger } from '../../../proxy/process/log'
import type { CommitJob } from '../../../proxy/record'
import type { HoldfastConfig } from '../../../proxy/store/config'
import type { Committer } from '../../../proxy/record/commit/committer'
import { Upstream } from '../../../proxy/http/upstream'
import { eventually, REGISTER, ROOT, tempHome } from '../../support/harness'

const CONFIG: HoldfastConfig = {
  listen: { host: '127.0.0.1', port: 0 },
  defaults: { workspace: 'default', agent: 'main' },
  providers: { anthropic: { dialect: 'anthropic', base_url: 'http://127.0.0.1:9' } },
}

/** A committer whose commits land when the test says so (the context only queues and waits). */
function heldCommitter(): Committer & { land(): void; commits: number } {
  let release!: () => void
  const gate = new Promise<void>((r) => (release = r))
  const c = {
    commits: 0,
    land: () => release(),
    commit: async () => {
      c.commits++
      await gate
      return 'commit-id'
    },
    maintain: async () => undefined,
    memory: async () => undefined,
    faults: async () => [],
    retry: async () => undefined,
    close: async () => undefined,
  }
  return c
}

let home: string
let upstream: Upstream
const contexts: ServerContext[] = []
function context(config: Partial<HoldfastConfig> = {}, committer?: Committer): ServerContext {
  const ctx = new ServerContext(
    home,
    { ...CONFIG, ...config },
    upstream,
    silentLogger(),
    committer ?? heldCommitter(),
  )
  contexts.push(ctx)
  return ctx
}
beforeEach(() => {
  home = tempHome()
  upstream = new Upstream({ headersTimeoutMs: 1000, bodyTimeoutMs: 1000 })
})
afterEach(async () => {
  for (const ctx of contexts.splice(0)) {
    await ctx.closeTools()
    ctx.close()
  }
  await upstream.close()
  fs.rmSync(home, { recursive: true, force: true })
})

describe('workspaces and agents', () => {
  it('makes one Workspace per name on first use, and touches no disk doing so', () => {
    const ctx = context()
    const a = ctx.workspace('alpha')
    expect(ctx.workspace('alpha')).toBe(a)
    expect(ctx.workspace('beta')).not.toBe(a)
    expect([a.name, a.home]).toEqual(['alpha', home])
    expect([...ctx.workspaces.keys()]).toEqual(['alpha', 'beta'])
    expect(fs.readdirSync(home)).toEqual([])
  })

  it('makes one AgentState per (workspace, agent), on the shared Workspace of its name', () => {
    const ctx = context()
    const main = ctx.agent('w1', 'main')
    expect(ctx.agent('w1', 'main')).toBe(main)
    expect(main.ws).toBe(ctx.workspace('w1'))
    // The same agent name in another workspace, or swapped names, is another agent.
    const others = [ctx.agent('w2', 'main'), ctx.agent('main', 'w1')]
    expect(new Set([main, ...others]).size).toBe(3)
    expect(ctx.agents.size).toBe(3)
  })

  it('keeps one roles reader per workspace', () => {
    const ctx = context()
    expect(ctx.configReader('w')).toBe(ctx.configReader('w'))
    expect(ctx.configReader('w')).not.toBe(ctx.configReader('v'))
  })
})

describe('settings from holdfast.yaml', () => {
  it('takes the hold TTLs, the body limit and the gc cadence from the config, with their defaults', () => {
    const plain = context()
    expect([plain.holdTtlMs, plain.holdLongTtlMs, plain.bodyLimit, plain.gcEvery]).toEqual([
      CACHE_TTL_MS,
      LONG_CACHE_TTL_MS,
      32 * 1024 * 1024,
      200,
    ])
    const set = context({
      hold: { ttl_ms: 1000, long_ttl_ms: 2000 },
      limits: { body_bytes: 4096 },
      maintenance: { gc_every_steps: 7 },
      journal: { fsync: true },
    } as Partial<HoldfastConfig>)
    expect([set.holdTtlMs, set.holdLongTtlMs, set.bodyLimit, set.gcEvery, set.records.fsync]).toEqual([
      1000,
      2000,
      4096,
      7,
      true,
    ])
  })
})

describe('tool hosts and the MCP endpoint', () => {
  it('are made once, on first use, and the tool hosts read the config as it is now', async () => {
    const ctx = context()
    const tools = ctx.tools
    expect(ctx.tools).toBe(tools)
    expect(tools.declared()).toEqual([])
    ctx.config = { ...ctx.config, clients: { later: { mcp: { command: 'true' } } } }
    expect(tools.declared()).toEqual(['later'])
    expect(ctx.mcp).toBe(ctx.mcp)
    await ctx.closeTools()
  })

  it('close without error when they were never made', async () => {
    await expect(context().closeTools()).resolves.toBeUndefined()
  })
})

describe('requests in flight', () => {
  it('collects once idle after a tracked step, and close stops that collection from running later', async () => {
    const open = context({ limits: { idle_collect_ms: 20 } })
    const closed = context({ limits: { idle_collect_ms: 20 } })
    await open.track(Promise.resolve())
    await closed.track(Promise.resolve())
    closed.close()
    await new Promise((r) => setTimeout(r, 150))
    expect(open.idle.lastCollectionMs).toBeGreaterThanOrEqual(0)
    expect(closed.idle.lastCollectionMs).toBeUndefined()
  })

  it('tracks a request until it settles, resolved or rejected, and hands back the same promise', async () => {
    const ctx = context()
    let fail!: (e: Error) => void
    const p = new Promise<void>((_, reject) => (fail = reject))
    p.catch(() => undefined)
    expect(ctx.track(p)).toBe(p)
    const ok = ctx.track(Promise.resolve(1))
    expect(ctx.inflight.size).toBe(2)
    await ok
    fail(new Error('client gone'))
    await p.catch(() => undefined)
    await Promise.resolve()
    expect(ctx.inflight.size).toBe(0)
  })

  it('drains every request, those tracked while it waits included, then every queued commit', async () => {
    const committer = heldCommitter()
    const ctx = context({}, committer)
    const order: string[] = []
    let finishFirst!: () => void
    void ctx.track(
      new Promise<void>((r) => (finishFirst = r)).then(() => {
        order.push('first')
        // A request that started while the first was finishing: drain waits for it too.
        void ctx.track(new Promise<void>((r) => setTimeout(r, 20)).then(() => order.push('second')))
      }),
    )
    const agent = ctx.agent('w', 'main')
    const landed = agent.queueCommit(1, Promise.resolve({} as CommitJob)).then(() => order.push('commit'))
    let drained = false
    const draining = ctx.drain().then(() => (drained = true))
    finishFirst()
    await eventually(() => order.length === 2, 5000, 'both requests to finish')
    await new Promise((r) => setTimeout(r, 20)) // time for drain to go on, were it not waiting
    expect([order, drained, committer.commits]).toEqual([['first', 'second'], false, 1])
    committer.land()
    await draining
    await landed
    expect(order).toEqual(['first', 'second', 'commit'])
    expect(fs.existsSync(path.join(home, 'workspaces'))).toBe(false) // queuing a commit wrote nothing itself
  })
})

describe('the shutdown signal', () => {
  it('takes a listener per step in flight, however many, without a leak warning', () => {
    // Node warns on its own stderr, outside jest's realm: a process of its own says what it printed.
    const script = `
      const { ServerContext } = require('./proxy/live/context')
      const { Upstream } = require('./proxy/http/upstream')
      const { silentLogger } = require('./proxy/process/log')
      const ctx = new ServerContext(${JSON.stringify(home)}, ${JSON.stringify(CONFIG)}, new Upstream({}), silentLogger(), { close: async () => undefined })
      const ls = Array.from({ length: 64 }, () => () => undefined)
      for (const l of ls) ctx.shutdown.signal.addEventListener('abort', l)
      for (const l of ls) ctx.shutdown.signal.removeEventListener('abort', l)
      setImmediate(() => process.exit(0))`
    const r = spawnSync(process.execPath, ['-r', REGISTER, '-e', script], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 30_000,
    })
    expect(r.status).toBe(0)
    expect(r.stderr).not.toMatch(/MaxListenersExceededWarning/)
  })
})
