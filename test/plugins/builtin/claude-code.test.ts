/**
 * The built-in claude-code plugin on the requests Claude Code really sends (captured through
 * holdfast from 2.1.197 and 2.1.332, with and without CLAUDE_CODE_GATEWAY_HINT_HEADERS=1), then
 * on modelled requests for the headers no captured version sends (a parent agent id, the
 * auxiliary and workflow classes, a quota probe); second sessions, names that stay usable, and
 * requests from anything else left alone. One end-to-end check: the body goes upstream untouched.
 */
import fs from 'node:fs'
import path from 'node:path'
import claudeCode from '../../../plugins/builtin/claude-code'
import { exchange } from '../../../plugins/exchange'
import { runPlugin } from '../../../plugins/instance'
import { startProxy } from '../../support/harness'
import { cliInProcess } from '../../proxy/tools/support'
import {
  agentsOf,
  CAPTURED_VERSIONS,
  type Fixture,
  fixture,
  FIXTURES,
  meta,
  postFixture,
  withoutHints,
} from '../support'

const ex = (f: Fixture, agent = 'main') =>
  exchange({ body: f.body as never, headers: f.headers, path: f.path, agent })
const withHeaders = (f: Fixture, headers: Record<string, string>): Fixture => ({
  ...f,
  headers: { ...f.headers, ...headers },
})
const idOf = (f: Fixture): string => f.headers['x-claude-code-agent-id'] as string

const captured = CAPTURED_VERSIONS.flatMap((version) =>
  (['hints', 'plain'] as const).map((mode) => ({
    version,
    mode,
    at: (n: string) => fixture(`${version}/${mode}/${n}`),
  })),
)

describe.each(captured)('claude-code on what Claude Code $version sends ($mode)', ({ version, mode, at }) => {
  it('keeps the main, tool-result, compaction and after-compaction requests on the addressed agent, marking the compaction and the step after it', async () => {
    const p = runPlugin(claudeCode)
    for (const name of ['main', 'tool-result']) expect(await p.identify(ex(at(name)))).toBeUndefined()
    const headed = version === '2.1.332' && mode === 'hints'
    expect(await p.identify(ex(at('compaction')))).toEqual({
      compaction: {
        kind: 'request',
        via: headed
          ? 'header x-claude-code-request-class: compaction'
          : 'its last user turn asks for a summary of the conversation',
      },
    })
    expect(await p.identify(ex(at('after-compaction')))).toEqual({
      compaction: {
        kind: 'after',
        via: headed
          ? 'header x-claude-code-context-compacted: manual'
          : 'its first message continues from a summary',
      },
    })
    // Only the first main request after the compaction is marked.
    expect(await p.identify(ex(at('after-compaction')))).toBeUndefined()
  })

  it('does not mark a request as after a compaction when no compaction came before it in the session', async () => {
    const p = runPlugin(claudeCode)
    await p.identify(ex(at('main')))
    expect(await p.identify(ex(at('after-compaction')))).toBeUndefined()
  })

  it('puts the subagent on <agent>.sub-<its agent id>, from the agent id alone when no request class says', async () => {
    const p = runPlugin(claudeCode)
    await p.identify(ex(at('main')))
    const sub = at('subagent')
    const classed = sub.headers['x-claude-code-request-class'] !== undefined
    expect(classed).toBe(version === '2.1.332' && mode === 'hints')
    expect(await p.identify(ex(sub))).toEqual({
      agent: `main.sub-${idOf(sub)}`,
      why: classed ? 'claude-code: request class subagent' : 'claude-code: an agent id',
    })
  })

  it('puts a second session on the same address on <agent>.s-<first 8 of its session id>', async () => {
    const p = runPlugin(claudeCode)
    await p.identify(ex(at('main')))
    const second = at('second-session')
    const id = second.headers['x-claude-code-session-id'] as string
    expect(await p.identify(ex(second))).toMatchObject({ agent: `main.s-${id.slice(0, 8)}` })
  })
})

describe('which session owns an address', () => {
  const main = fixture('2.1.332/hints/main')
  const second = fixture('2.1.332/hints/second-session')
  const sessionOf = (f: Fixture): string => f.headers['x-claude-code-session-id'] as string
  const recordedBy = (session: string | undefined) => {
    const calls: string[] = []
    return {
      calls,
      records: {
        latestStep: (ws: string, agent: string) => {
          calls.push(`${ws}/${agent}`)
          return Promise.resolve(
            session === undefined
              ? undefined
              : { step: '007', headers: { 'x-claude-code-session-id': session } },
          )
        },
      },
    }
  }

  it("is the session of the address's latest recorded step, so a restart lays sessions out as before", async () => {
    const { records, calls } = recordedBy(sessionOf(second))
    const p = runPlugin(claudeCode, undefined, { records })
    // The session the records name keeps the address, though another one came first since the start.
    expect(await p.identify(ex(main))).toMatchObject({ agent: `main.s-${sessionOf(main).slice(0, 8)}` })
    expect(await p.identify(ex(second))).toBeUndefined()
    expect(await p.identify(ex(main))).toMatchObject({ agent: `main.s-${sessionOf(main).slice(0, 8)}` })
    expect(calls).toEqual(['default/main'])
  })

  it('is the first session seen when the address has no step with a session id', async () => {
    const { records, calls } = recordedBy(undefined)
    const p = runPlugin(claudeCode, undefined, { records })
    expect(await p.identify(ex(main))).toBeUndefined()
    expect(await p.identify(ex(second))).toMatchObject({ agent: `main.s-${sessionOf(second).slice(0, 8)}` })
    expect(calls).toEqual(['default/main'])
  })
})

describe('the captured fixtures', () => {
  it('carry no key: x-api-key is REDACTED and nothing looks like an Anthropic key', () => {
    for (const { version, mode } of captured) {
      const dir = path.join(FIXTURES, version, mode)
      for (const file of fs.readdirSync(dir)) {
        const text = fs.readFileSync(path.join(dir, file), 'utf8')
        expect(text).not.toMatch(/sk-ant-/)
        expect((JSON.parse(text) as Fixture).headers['x-api-key']).toBe('REDACTED')
      }
    }
  })
})

describe('claude-code on the interactive title request (2.1.197; 2.1.332 sent none in the capture)', () => {
  it.each(['hints', 'plain'])(
    'sends it to <agent>.aux by the heuristics, before any main request (%s)',
    async (mode) => {
      expect(await runPlugin(claudeCode).identify(ex(fixture(`2.1.197/${mode}/title`)))).toEqual({
        agent: 'main.aux',
        why: 'claude-code: no tools and a short system prompt (1319 chars)',
      })
    },
  )
})

describe('claude-code on modelled headers no captured version sends', () => {
  const plugin = () => runPlugin(claudeCode)

  it('lets the request class decide over an agent id and over the heuristics', async () => {
    const p = plugin()
    const sub = fixture('modelled/subagent')
    expect(await p.identify(ex(withHeaders(sub, { 'x-claude-code-request-class': 'main' })))).toBeUndefined()
    // A compaction stays on the main chain, marked as one.
    expect(await p.identify(ex(fixture('modelled/compaction')))).toEqual({
      compaction: { kind: 'request', via: 'header x-claude-code-request-class: compaction' },
    })
    for (const name of ['title', 'quota', 'workflow']) {
      expect(await p.identify(ex(fixture(`modelled/${name}`)))).toMatchObject({ agent: 'main.aux' })
    }
  })

  it('nests a subagent whose parent agent id is a known subagent of the session under that subagent', async () => {
    const p = plugin()
    const sub = fixture('modelled/subagent')
    const outer = withHeaders(sub, { 'x-claude-code-agent-id': 'outer1' })
    expect(await p.identify(ex(outer))).toMatchObject({ agent: 'main.sub-outer1' })
    const inner = withHeaders(sub, {
      'x-claude-code-agent-id': 'inner2',
      'x-claude-code-parent-agent-id': 'outer1',
    })
    expect(await p.identify(ex(inner))).toEqual({
      agent: 'main.sub-outer1.sub-inner2',
      why: 'claude-code: request class subagent; under its parent agent outer1',
    })
    // A parent never seen as a subagent (the main agent's own id): a first-level subagent.
    expect(await p.identify(ex(sub))).toMatchObject({ agent: `main.sub-${idOf(sub)}` })
  })

  it('keeps only [A-Za-z0-9_-] of an id, so a derived agent name is always usable', async () => {
    const f = fixture('modelled/subagent')
    const hostile = withHeaders(f, { 'x-claude-code-agent-id': '../../x y:z~^' })
    expect(await plugin().identify(ex(hostile))).toMatchObject({ agent: 'main.sub-xyz' })
    const empty = withHeaders(f, { 'x-claude-code-agent-id': '../' })
    expect((await plugin().identify(ex(empty)))?.agent).toMatch(/^main\.sub-[0-9a-f]{8}$/)
  })

  it('leaves requests that are not from Claude Code alone', async () => {
    const f = fixture('2.1.197/plain/title')
    const sdk = { 'user-agent': 'Anthropic/JS 0.74.0', 'anthropic-version': '2023-06-01' }
    expect(await plugin().identify(exchange({ body: f.body as never, headers: sdk }))).toBeUndefined()
  })
})

describe('claude-code heuristics (no request class, no agent id)', () => {
  it('takes the session id from metadata.user_id when the header is absent', async () => {
    const p = runPlugin(claudeCode)
    await p.identify(ex(withoutHints(fixture('modelled/main'))))
    const other = withoutHints(fixture('modelled/main'))
    const metadata = {
      user_id: JSON.stringify({ device_id: 'd', session_id: 'beefcafe-0000-4000-8000-000000000000' }),
    }
    const second = { ...other, body: { ...other.body, metadata } }
    expect(await p.identify(ex(second))).toMatchObject({ agent: 'main.s-beefcafe' })
  })

  it('sends a max_tokens: 1 probe to <agent>.aux', async () => {
    expect(await runPlugin(claudeCode).identify(ex(withoutHints(fixture('modelled/quota'))))).toEqual({
      agent: 'main.aux',
      why: 'claude-code: a max_tokens: 1 probe',
    })
  })

  it("sends a small-model request to <agent>.aux while the session's main model is another", async () => {
    const p = runPlugin(claudeCode)
    await p.identify(ex(withoutHints(fixture('modelled/main'))))
    expect(await p.identify(ex(withoutHints(fixture('modelled/explore'))))).toEqual({
      agent: 'main.aux',
      why: "claude-code: small model claude-haiku-4-5-20251001 while the session's main model is claude-sonnet-4-5-20250929",
    })
  })

  it('cannot tell a subagent from the main chain without its agent id, and leaves it there', async () => {
    expect(
      await runPlugin(claudeCode).identify(ex(withoutHints(fixture('modelled/subagent')))),
    ).toBeUndefined()
  })

  it('uses no heuristics when told not to', async () => {
    expect(
      await runPlugin(claudeCode, { heuristics: false } as never).identify(
        ex(withoutHints(fixture('modelled/quota'))),
      ),
    ).toBeUndefined()
  })
})

describe('claude-code in the proxy', () => {
  it('records a real 2.1.197 session: the subagent on its own agent, the rest one main chain, bodies byte for byte', async () => {
    const p = await startProxy()
    try {
      const base = `${p.url}/w/cc/a/main`
      const names = ['main', 'subagent', 'tool-result', 'compaction', 'after-compaction']
      const sent = names.map((n) => fixture(`2.1.197/plain/${n}`))
      for (const f of sent) expect((await postFixture(base, f)).status).toBe(200)
      await p.settled()
      expect(p.fake.received.map((r) => r.body.toString())).toEqual(sent.map((f) => JSON.stringify(f.body)))
      const sub = `main.sub-${idOf(sent[1] as Fixture)}`
      expect(agentsOf(p.repo('cc'))).toEqual(['main', sub])
      expect(meta(p.repo('cc'), sub, '001').identified).toEqual({
        plugin: 'claude-code',
        from_workspace: 'cc',
        from_agent: 'main',
        why: 'claude-code: an agent id',
      })
      // The main chain: main, tool result, compaction, after compaction; the tool result's step
      // continues the first one (the subagent no longer lands between them).
      expect(meta(p.repo('cc'), 'main', '002').hold.reason).toBe('no-subtraction')
      expect(meta(p.repo('cc'), 'main', '004').identified).toBeUndefined()
      // The compaction and the step after it are marked, from their shape (2.1.197 sends no header).
      expect(meta(p.repo('cc'), 'main', '003').compaction).toEqual({
        kind: 'request',
        via: 'its last user turn asks for a summary of the conversation',
      })
      expect(meta(p.repo('cc'), 'main', '004').compaction).toEqual({
        kind: 'after',
        via: 'its first message continues from a summary',
      })
      const steps = await cliInProcess(['steps', 'cc', 'main', '--json', '--home', p.home])
      expect((JSON.parse(steps.stdout) as { compaction: string | null }[]).map((r) => r.compaction)).toEqual([
        null,
        null,
        'request',
        'after',
      ])
      const why = await cliInProcess(['why', 'cc', 'main', '004', '--home', p.home])
      expect(why.stdout).toContain('the conversation was compacted at step 003')
      expect(why.stdout).not.toContain('another conversation')
    } finally {
      await p.close()
    }
  })

  it('lays a second session out the same after a restart: the address stays with the session its records name', async () => {
    const p = await startProxy()
    try {
      const base = () => `${p.url}/w/cc/a/main`
      const [first, second] = [fixture('2.1.332/hints/main'), fixture('2.1.332/hints/second-session')]
      expect((await postFixture(base(), first)).status).toBe(200)
      await p.settled()
      await p.restart()
      // After a restart (or with a serve per `holdfast run`), the second session is still the second.
      expect((await postFixture(base(), second)).status).toBe(200)
      await p.settled()
      const id = (second.headers['x-claude-code-session-id'] as string).slice(0, 8)
      expect(agentsOf(p.repo('cc'))).toEqual(['main', `main.s-${id}`])
    } finally {
      await p.close()
    }
  })
})
