/**
 * The plugin chain inside the proxy (plugin objects, no module loading): run order, the first
 * answer decides and `undefined` falls through, deciding hooks fail closed with 502 PLUGIN_FAILED
 * naming plugin and hook, observing hooks fail open, each request gets exactly one of
 * onResponse/onError, and no plugin can edit the request.
 */
import fs from 'node:fs'
import path from 'node:path'
import type { Exchange, FailureView, Hooks } from '../../plugins/api'
import type { AnyPlugin } from '../../plugins/instance'
import { type Proxy, startProxy } from '../support/harness'
import { agentsOf, ask, meta, post } from './support'

const calls: string[] = []
const seen: { hook: string; agent: string; status?: number | null; step?: string | null; code?: string }[] =
  []
const when = (ex: Exchange, header: string, value: string): boolean => ex.headers[header] === value

function plugin(name: string, hooks: Hooks): AnyPlugin {
  return { name, apiVersion: 1, setup: () => hooks }
}

const plugins: Record<string, AnyPlugin> = {
  first: plugin('first', {
    identify(ex) {
      calls.push('first.identify')
      if (when(ex, 'x-test', 'move')) return { agent: 'moved', why: 'asked to move' }
      if (when(ex, 'x-test', 'typo')) return { agnet: 'x' } as never
      if (when(ex, 'x-test', 'bad-name')) return { agent: '../escape' }
      if (when(ex, 'x-test', 'edit')) (ex.body as { model: string }).model = 'sneaky'
      return undefined
    },
    route: (ex) => (when(ex, 'x-test', 'first-routes') ? { model: 'm-first' } : undefined),
  }),
  thrower: plugin('thrower', {
    identify(ex) {
      if (when(ex, 'x-throw', 'identify')) throw new Error('identify broke')
    },
    route(ex) {
      if (when(ex, 'x-throw', 'route')) throw new Error('route broke')
    },
    onResponse(ex) {
      if (when(ex, 'x-throw', 'observe')) throw new Error('onResponse broke')
    },
    onError(ex) {
      if (when(ex, 'x-throw', 'observe')) throw new Error('onError broke')
    },
  }),
  second: plugin('second', {
    identify(ex) {
      calls.push('second.identify')
      return when(ex, 'x-test', 'move') ? { agent: 'never' } : undefined
    },
    route(ex) {
      if (when(ex, 'x-test', 'ghost-row')) return { provider: 'ghost' }
      if (when(ex, 'x-test', 'ghost-role')) return { role: 'ghost' }
      return ex.summary.lastUserText === 'route me' ? { model: 'm-second', why: 'asked' } : undefined
    },
  }),
  recorder: plugin('recorder', {
    onResponse: (ex) => void seen.push({ hook: 'onResponse', agent: ex.agent, ...ex.response }),
    onError: (ex, err: FailureView) => void seen.push({ hook: 'onError', agent: ex.agent, code: err.code }),
  }),
}

let p: Proxy
let base: string
beforeAll(async () => {
  p = await startProxy({ config: { plugins: ['first', 'thrower', 'second', 'recorder'] }, plugins })
  base = `${p.url}/w/chain/a/main`
})
afterAll(() => p.close())
beforeEach(async () => {
  await p.settled() // the previous test's observing hooks run after its client had the answer
  calls.length = 0
  seen.length = 0
  p.fake.reset()
})

const sentModel = (i = 0): unknown => JSON.parse(p.fake.received[i]?.body.toString() ?? '{}').model

describe('order and fall-through', () => {
  it('runs the plugins in the order holdfast.yaml lists them, with claude-code first unless listed', () => {
    expect(p.server.ctx.plugins.plugins.map((x) => x.name)).toEqual([
      'claude-code',
      'first',
      'thrower',
      'second',
      'recorder',
    ])
  })

  it('lets the first plugin that answers decide; a later plugin is not asked', async () => {
    expect((await post(base, ask('hi'), { 'x-test': 'move' })).status).toBe(200)
    expect(calls).toEqual(['first.identify'])
    await p.settled()
    expect(agentsOf(p.repo('chain'))).toContain('moved')
    expect(meta(p.repo('chain'), 'moved', '001').identified).toEqual({
      plugin: 'first',
      from_workspace: 'chain',
      from_agent: 'main',
      why: 'asked to move',
    })
  })

  it('passes to the next plugin when one returns undefined', async () => {
    expect((await post(base, ask('route me'))).status).toBe(200)
    expect(calls).toEqual(['first.identify', 'second.identify'])
    expect(sentModel()).toBe('m-second')
    await p.settled()
    const m = meta(p.repo('chain'), 'main', '001')
    expect(m.route).toMatchObject({ model: 'm-second', plugin: 'second' })
    expect(m.changes).toContainEqual({ field: 'model', why: 'second chose m-second' })
  })

  it('sends the request as the client sent it when no plugin answers', async () => {
    expect((await post(base, ask('plain'))).status).toBe(200)
    expect(p.fake.received[0]?.body.toString()).toBe(JSON.stringify(ask('plain')))
  })
})

describe('deciding hooks fail closed', () => {
  const refused = async (headers: Record<string, string>, sentence: RegExp): Promise<void> => {
    const before = fs.existsSync(path.join(p.home, 'workspaces', 'closed'))
    const r = await post(`${p.url}/w/closed/a/main`, ask('hi'), headers)
    expect([r.status, r.error]).toEqual([502, 'PLUGIN_FAILED'])
    expect(JSON.parse(r.text).error.message).toMatch(sentence)
    expect(p.fake.received).toHaveLength(0)
    expect(fs.existsSync(path.join(p.home, 'workspaces', 'closed'))).toBe(before) // nothing recorded
  }

  it('answers 502 PLUGIN_FAILED naming the plugin and hook when identify or route throws, and sends nothing', async () => {
    await refused({ 'x-throw': 'identify' }, /^plugin thrower \(identify\) failed: identify broke$/)
    await refused({ 'x-throw': 'route' }, /^plugin thrower \(route\) failed: route broke$/)
  })

  it('refuses a malformed answer: an unknown key, or a name that is not a path and ref component', async () => {
    await refused({ 'x-test': 'typo' }, /^plugin first \(identify\) returned an unknown key "agnet"/)
    await refused(
      { 'x-test': 'bad-name' },
      /^plugin first \(identify\) returned a bad agent: agent name "..\/escape"/,
    )
  })

  it('blames the plugin for a route holdfast refuses: an undeclared provider row or role', async () => {
    await refused({ 'x-test': 'ghost-row' }, /^plugin second \(route\) chose provider row "ghost"/)
    await refused(
      { 'x-test': 'ghost-role' },
      /^plugin second \(route\) chose \{"role":"ghost"\}, which holdfast refused/,
    )
  })

  it('lets no plugin edit the request: a write to the body throws, and the request fails closed', async () => {
    await refused({ 'x-test': 'edit' }, /^plugin first \(identify\) failed: the exchange is read-only/)
  })
})

describe('observing hooks fail open', () => {
  it('logs and skips a throwing onResponse; the client gets its answer and later plugins still observe', async () => {
    expect((await post(base, ask('hi'), { 'x-throw': 'observe' })).status).toBe(200)
    await p.settled()
    expect(seen).toEqual([
      expect.objectContaining({ hook: 'onResponse', agent: 'main', status: 200, outcome: 'ok' }) as unknown,
    ])
  })

  it('gives each request exactly one of onResponse (a provider error is an answer) or onError', async () => {
    p.fake.enqueue({ status: 500 })
    expect((await post(base, ask('hi'))).status).toBe(500)
    await p.settled() // onResponse runs after finish, once the client has its answer
    expect((await post(base, ask('hi'), { 'x-throw': 'route' })).status).toBe(502)
    expect((await post(base, ask('hi'), { 'x-throw': 'observe', 'x-test': 'typo' })).status).toBe(502)
    await p.settled()
    expect(seen.map((s) => [s.hook, s.status ?? s.code])).toEqual([
      ['onResponse', 500],
      ['onError', 'PLUGIN_FAILED'],
      ['onError', 'PLUGIN_FAILED'],
    ])
    expect(seen[0]?.step).toMatch(/^\d{3}$/)
  })

  it('observes count_tokens calls too, with no step', async () => {
    expect((await post(base, ask('count'), {}, '/v1/messages/count_tokens')).status).toBe(200)
    await p.settled()
    expect(seen).toEqual([
      expect.objectContaining({ hook: 'onResponse', step: null, status: 200 }) as unknown,
    ])
  })
})
