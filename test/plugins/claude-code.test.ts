/**
 * The built-in claude-code plugin: each request class Claude Code sends, with its hint headers
 * and without them (the documented heuristics), second sessions, names that stay usable, and
 * requests from anything else left alone. One end-to-end check: the body goes upstream untouched.
 */
import claudeCode from '../../plugins/builtin/claude-code'
import { exchange } from '../../plugins/exchange'
import { runPlugin } from '../../plugins/instance'
import { startProxy } from '../support/harness'
import { agentsOf, type Fixture, fixture, meta, postFixture, withoutHints } from './support'

const ex = (f: Fixture, agent = 'main') =>
  exchange({ body: f.body as never, headers: f.headers, path: f.path, agent })
const withSession = (f: Fixture, id: string): Fixture => ({
  ...f,
  headers: { ...f.headers, 'x-claude-code-session-id': id },
})

describe('claude-code with the hint headers', () => {
  const plugin = () => runPlugin(claudeCode)

  it('keeps main and compaction requests on the addressed agent', async () => {
    const p = plugin()
    expect(await p.identify(ex(fixture('main')))).toBeUndefined()
    expect(await p.identify(ex(fixture('compaction')))).toBeUndefined()
  })

  it('puts a subagent on <agent>.sub-<agent id>', async () => {
    expect(await plugin().identify(ex(fixture('subagent')))).toEqual({
      agent: 'main.sub-a7f3c9e1-2b4d-4e6f-8a0c-1d3e5f7a9b2c',
      why: 'claude-code: request class subagent',
    })
  })

  it('puts auxiliary and workflow requests on <agent>.aux', async () => {
    const p = plugin()
    for (const name of ['title', 'quota', 'workflow']) {
      expect(await p.identify(ex(fixture(name)))).toMatchObject({ agent: 'main.aux' })
    }
  })

  it('puts a second session on the same address on <agent>.s-<first 8 of its session id>', async () => {
    const p = plugin()
    expect(await p.identify(ex(fixture('main')))).toBeUndefined()
    const other = 'c0ffee12-3456-4789-abcd-ef0123456789'
    expect(await p.identify(ex(withSession(fixture('main'), other)))).toEqual({
      agent: 'main.s-c0ffee12',
      why: 'claude-code: request class main; a second session on main',
    })
    expect(await p.identify(ex(withSession(fixture('title'), other)))).toMatchObject({
      agent: 'main.s-c0ffee12.aux',
    })
    // The first session stays first; another address has its own first session.
    expect(await p.identify(ex(fixture('main')))).toBeUndefined()
    expect(await p.identify(ex(withSession(fixture('main'), other), 'review'))).toBeUndefined()
  })

  it('keeps only [A-Za-z0-9_-] of an id, so a derived agent name is always usable', async () => {
    const f = fixture('subagent')
    const hostile = { ...f, headers: { ...f.headers, 'x-claude-code-agent-id': '../../x y:z~^' } }
    expect(await plugin().identify(ex(hostile))).toMatchObject({ agent: 'main.sub-xyz' })
    const empty = { ...f, headers: { ...f.headers, 'x-claude-code-agent-id': '../' } }
    expect((await plugin().identify(ex(empty)))?.agent).toMatch(/^main\.sub-[0-9a-f]{8}$/)
  })

  it('leaves requests that are not from Claude Code alone', async () => {
    const f = fixture('title')
    const sdk = { 'user-agent': 'Anthropic/JS 0.74.0', 'anthropic-version': '2023-06-01' }
    expect(await plugin().identify(exchange({ body: f.body as never, headers: sdk }))).toBeUndefined()
  })
})

describe('claude-code without the hint headers (heuristics)', () => {
  it('keeps main and compaction requests (tools, full system prompt) on the addressed agent', async () => {
    const p = runPlugin(claudeCode)
    expect(await p.identify(ex(withoutHints(fixture('main'))))).toBeUndefined()
    expect(await p.identify(ex(withoutHints(fixture('compaction'))))).toBeUndefined()
  })

  it('takes the session id from metadata.user_id when the header is absent', async () => {
    const p = runPlugin(claudeCode)
    await p.identify(ex(withoutHints(fixture('main'))))
    const other = withoutHints(fixture('main'))
    const metadata = {
      user_id: JSON.stringify({ device_id: 'd', session_id: 'beefcafe-0000-4000-8000-000000000000' }),
    }
    const second = { ...other, body: { ...other.body, metadata } }
    expect(await p.identify(ex(second))).toMatchObject({ agent: 'main.s-beefcafe' })
  })

  it('sends a max_tokens: 1 probe to <agent>.aux', async () => {
    expect(await runPlugin(claudeCode).identify(ex(withoutHints(fixture('quota'))))).toEqual({
      agent: 'main.aux',
      why: 'claude-code: a max_tokens: 1 probe',
    })
  })

  it("sends a small-model request to <agent>.aux while the session's main model is another", async () => {
    const p = runPlugin(claudeCode)
    await p.identify(ex(withoutHints(fixture('main'))))
    expect(await p.identify(ex(withoutHints(fixture('explore'))))).toEqual({
      agent: 'main.aux',
      why: "claude-code: small model claude-haiku-4-5-20251001 while the session's main model is claude-sonnet-4-5-20250929",
    })
  })

  it('sends a request with no tools and a short system prompt to <agent>.aux, even before any main request', async () => {
    const p = runPlugin(claudeCode)
    expect(await p.identify(ex(withoutHints(fixture('title'))))).toMatchObject({
      agent: 'main.aux',
      why: expect.stringMatching(/no tools and a short system prompt/) as unknown,
    })
    expect(await p.identify(ex(withoutHints(fixture('workflow'))))).toMatchObject({ agent: 'main.aux' })
  })

  it('cannot tell a subagent on the main model from the main chain, and leaves it there', async () => {
    expect(await runPlugin(claudeCode).identify(ex(withoutHints(fixture('subagent'))))).toBeUndefined()
  })

  it('uses no heuristics when told not to', async () => {
    expect(
      await runPlugin(claudeCode, { heuristics: false } as never).identify(
        ex(withoutHints(fixture('quota'))),
      ),
    ).toBeUndefined()
  })
})

describe('claude-code in the proxy', () => {
  it('records each class on its own agent, sends the body byte for byte, and says why in meta.json', async () => {
    const p = await startProxy()
    try {
      const base = `${p.url}/w/cc/a/main`
      for (const name of ['main', 'title', 'subagent', 'compaction']) {
        expect((await postFixture(base, fixture(name))).status).toBe(200)
      }
      await p.settled()
      const sent = p.fake.received.map((r) => r.body.toString())
      expect(sent).toEqual(
        ['main', 'title', 'subagent', 'compaction'].map((n) => JSON.stringify(fixture(n).body)),
      )
      const sub = 'main.sub-a7f3c9e1-2b4d-4e6f-8a0c-1d3e5f7a9b2c'
      expect(agentsOf(p.repo('cc'))).toEqual(['main', 'main.aux', sub])
      expect(meta(p.repo('cc'), sub, '001').identified).toEqual({
        plugin: 'claude-code',
        from_workspace: 'cc',
        from_agent: 'main',
        why: 'claude-code: request class subagent',
      })
      expect(meta(p.repo('cc'), 'main', '002').identified).toBeUndefined() // compaction: the main chain
    } finally {
      await p.close()
    }
  })
})
