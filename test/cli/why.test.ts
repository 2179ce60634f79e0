/**
 * cli/why beyond test/cli/program.commands.test.ts (a held step), test/cli/agents.test.ts
 * (another session) and test/proxy/core/why-words.test.ts (the words): `why` on a first step, on a model change, on a step whose system prompt and
 * first message both changed, on a step whose previous record is damaged (said, not compared), a
 * step number given without its zeros, and one that is not a number.
 */
import { why } from '../../cli/why'
import { startProxy, type Proxy } from '../support/harness'
import { damageRecord } from '../support/repo-checks'
import { runCli } from './inprocess.support'

describe('holdfast why', () => {
  let p: Proxy
  async function send(agent: string, body: object): Promise<void> {
    const res = await fetch(`${p.url}/w/default/a/${agent}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ max_tokens: 8, ...body }),
    })
    expect(res.status).toBe(200)
    await res.arrayBuffer()
  }
  beforeAll(async () => {
    p = await startProxy({ config: { plugins: [] } })
    const hi = [{ role: 'user', content: 'hi' }]
    await send('w', { model: 'claude-sonnet-4-5', system: 'You are terse.', messages: hi })
    await send('w', { model: 'claude-haiku-4-5', system: 'You are terse.', messages: hi })
    await send('w', {
      model: 'claude-haiku-4-5',
      system: 'You are verbose.',
      messages: [{ role: 'user', content: 'something else' }],
    })
    await send('dmg', { model: 'claude-sonnet-4-5', messages: hi })
    await send('dmg', { model: 'claude-sonnet-4-5', messages: hi })
    await p.settled()
    damageRecord(p.repo(), 'dmg', '001', 'not json at all')
  })
  afterAll(() => p.close())

  it('says a first step has the whole prefix new and nothing to compare', async () => {
    const r = await why(p.home, 'default', 'w', '1')
    expect(r).toMatchObject({ step: '001', previous: null, moves: null })
    expect(r.summary[0]).toBe('first step: the whole prefix is new')
    expect(r.summary.join('\n')).not.toContain('first-step')
    expect(r.summary.at(-1)).toMatch(/^provider cache: read \d+, wrote \d+, uncached input \d+$/)
  })

  it('names the model as what moved, and the first difference in cache order', async () => {
    const r = await why(p.home, 'default', 'w', '002')
    expect(r.previous).toBe('001')
    expect(r.moves).toMatchObject({ model: true, system: false, head: false, tools: false })
    expect(r.summary[0]).toBe('moved since 001: model')
    expect(r.moves?.firstDifference).toEqual(expect.any(String))
    expect(r.summary[1]).toBe(`first difference in cache order: ${r.moves?.firstDifference}, at character 7`)
    expect(r.summary.slice(2, 5)).toEqual([
      '  001: claude-sonnet-4-5',
      '  002: claude-haiku-4-5',
      'model: claude-sonnet-4-5 → claude-haiku-4-5',
    ])
    expect(r.summary.some((l) => l.includes('another conversation'))).toBe(false)
  })

  it('says the previous step came from another conversation when system and first message both moved', async () => {
    const r = await runCli(['why', 'default', 'w', '3', '--home', p.home])
    expect(r.code).toBe(0)
    const lines = r.stdout.trimEnd().split('\n')
    expect(lines[0]).toBe('step 003 of default/w')
    expect(lines[1]).toBe('  cause: system_prompt_changed: the system prompt changed')
    expect(lines[2]).toBe('  moved since 002: system, first message')
    expect(lines).toContain(
      '  step 002 came from another conversation (another system prompt and another first message)',
    )
  })

  it("says a damaged previous record can't be compared instead of comparing it", async () => {
    const r = await why(p.home, 'default', 'dmg', '002')
    expect(r.moves).toBeNull()
    expect(r.previous).toBeNull()
    expect(r.summary[0]).toMatch(/step 001's request\.json.*: nothing to compare$/)
  })

  it('refuses a step that is not a number, in one line', async () => {
    const r = await runCli(['why', 'default', 'w', 'latest', '--home', p.home])
    expect(r).toEqual({
      code: 1,
      stdout: '',
      stderr: 'holdfast: "latest" is not a step number (001, 002, …)\n',
    })
  })
})
