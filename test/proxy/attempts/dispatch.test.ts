/**
 * proxy/attempts/dispatch: `prepareDispatch` runs every check and builds the child's first request
 * while creating nothing (the child id from the parent and the time, the role routed by header, the headers
 * the notch's conversation needs, a clean start in the role row's own dialect); it refuses names
 * that are not names, a notch commit that is no step, a row holdfast.yaml does not declare, a pin
 * source that is not a file. `createChild` makes `agents/<child>` at the notch with goal.md and the
 * pins, and never moves an existing child ref. (test/proxy/attempts/fire.test.ts covers firing.)
 */
import fs from 'node:fs'
import path from 'node:path'
import { createChild, DispatchRefused, prepareDispatch } from '../../../proxy/attempts/dispatch'
import type { DispatchArgs } from '../../../proxy/core/attempt'
import { git } from '../../support/harness'
import { startAttemptsProxy, WS, type AttemptsProxy } from './proxy.support'

let a: AttemptsProxy
const NOW = new Date('2026-01-02T03:04:05.678Z')

beforeAll(async () => {
  a = await startAttemptsProxy(2)
})
afterAll(() => a.close())

const refs = (): string => git(a.p.repo(WS), 'for-each-ref', '--format=%(refname) %(objectname)').trim()
const args = (over: Partial<DispatchArgs> = {}): DispatchArgs => ({
  role: 'reviewer',
  ws: WS,
  parent: 'main',
  goal: 'Check the answer.',
  from: 'main@002',
  pins: [],
  ...over,
})
const prepare = (over: Partial<DispatchArgs> = {}) =>
  prepareDispatch(a.p.home, a.p.server.ctx.config, args(over), NOW)

async function refused(over: Partial<DispatchArgs>, config = a.p.server.ctx.config): Promise<string> {
  const before = refs()
  const err = await prepareDispatch(a.p.home, config, args(over), NOW).then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(DispatchRefused)
  expect(refs()).toBe(before)
  return (err as Error).message
}

describe('prepareDispatch', () => {
  it("builds the fork's first request from the notch, routed by role header, creating nothing", async () => {
    const before = refs()
    const p = await prepare()
    expect(refs()).toBe(before)
    expect(p.child).toMatch(/^main-20260102T030405Z-[0-9a-f]{4}$/)
    expect(p.notch).toMatchObject({ kind: 'fork', step: { agent: 'main', n: 2 } })
    expect(p.notch.commit).toBe(git(a.p.repo(WS), 'rev-parse', 'agents/main').trim())
    expect([p.dialect.name, p.roleModel]).toEqual(['anthropic', 'claude-haiku-4-5'])
    expect(p.headers).toEqual({
      'x-holdfast-role': 'reviewer',
      'anthropic-version': '2023-06-01',
      'content-type': 'application/json',
    })
    const body = JSON.parse(p.body.toString()) as {
      model: string
      messages: { role: string; content: unknown }[]
    }
    // A fork keeps the notch's request (its model too): x-holdfast-role routes it to the role's model.
    expect(body.model).toBe('claude-sonnet-4-5')
    expect(body.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user'])
    expect(body.messages[0]!.content).toBe('question 2')
    expect(JSON.stringify(body.messages[2])).toContain('Check the answer.')
  })

  it("starts clean from config/<name> in the role row's dialect, with the role's max output tokens", async () => {
    const gpt = await prepare({ role: 'gpt', from: 'config/default' })
    expect(gpt.notch.kind).toBe('clean')
    expect(gpt.dialect.name).toBe('openai')
    expect(gpt.headers).toEqual({ 'x-holdfast-role': 'gpt', 'content-type': 'application/json' })
    const body = JSON.parse(gpt.body.toString()) as { model: string; messages: unknown[] }
    expect(body.model).toBe('gpt-5')
    expect(JSON.stringify(body.messages)).toContain('Check the answer.')
    expect(JSON.stringify(body.messages)).not.toContain('question')
    const critic = JSON.parse(
      (await prepare({ role: 'critic', from: 'config/default' })).body.toString(),
    ) as {
      max_tokens: number
    }
    expect(critic.max_tokens).toBe(321)
  })

  it('refuses names that are not names before looking at the repository', async () => {
    expect(await refused({ ws: '../x' })).toMatch(/workspace/)
    expect(await refused({ parent: 'a b' })).toMatch(/agent/)
    expect(await refused({ role: 'no/slash' })).toMatch(/role/)
    expect(await refused({ ws: 'absent' })).toBe(`no workspace "absent" in ${a.p.home}`)
  })

  it('refuses a notch commit that records no step', async () => {
    const configTip = git(a.p.repo(WS), 'rev-parse', 'config/default').trim()
    expect(await refused({ from: configTip })).toBe(
      `--from ${configTip} is not a recorded step commit; fork from <agent>@<NNN>, agents/<agent> or config/<name>`,
    )
  })

  it('refuses a role whose provider row this holdfast.yaml does not declare', async () => {
    const { keyed: _keyed, ...rows } = a.p.server.ctx.config.providers
    const config = { ...a.p.server.ctx.config, providers: rows }
    expect(await refused({}, config)).toBe(
      'role "reviewer" routes to provider row "keyed", which holdfast.yaml does not declare',
    )
  })

  it('refuses a pin source that is a directory', async () => {
    const message = await refused({ pins: [{ dest: 'notes/a.md', src: a.p.home }] })
    expect(message).toBe(`pin source "${a.p.home}" is not readable: not a file`)
  })
})

describe('createChild', () => {
  it('creates agents/<child> at the notch with the goal and the pins, and never moves an existing child', async () => {
    const pin = path.join(a.p.home, 'pinned.md')
    fs.writeFileSync(pin, 'pinned text\n')
    const p = await prepare({ pins: [{ dest: 'notes/pinned.md', src: pin }] })
    const oid = await createChild(p)
    const repo = a.p.repo(WS)
    expect(git(repo, 'rev-parse', `agents/${p.child}`).trim()).toBe(oid)
    expect(git(repo, 'log', '-1', '--format=%s%n%P', oid).trim().split('\n')).toEqual([
      `dispatch: reviewer [${p.child}]`,
      p.notch.commit,
    ])
    expect(git(repo, 'show', `${oid}:goal.md`)).toBe('Check the answer.')
    expect(git(repo, 'show', `${oid}:notes/pinned.md`)).toBe('pinned text\n')
    // Everything the notch held is still there.
    expect(git(repo, 'ls-tree', '-r', '--name-only', oid)).toContain('steps/main/002/request.json')

    const again = await prepare({ goal: 'another goal' })
    await expect(createChild({ ...again, child: p.child })).rejects.toThrow()
    expect(git(repo, 'rev-parse', `agents/${p.child}`).trim()).toBe(oid)
  })
})
