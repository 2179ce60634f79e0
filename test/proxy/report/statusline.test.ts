/**
 * view/statusline: the serve finds the agent a Claude Code session's main requests went to (by the
 * session header it recorded), and sums the session's agents — itself, its subagents and side
 * requests, not another session on the same address.
 */
import { inSession, statusFor, statusText } from '../../../proxy/report/statusline'
import { startProxy, type Proxy } from '../../support/harness'
import { mainStep, sendStep } from '../../support/view-demo'

let p: Proxy
beforeAll(async () => {
  p = await startProxy()
  const cc = (session: string) => ({
    'x-claude-code-session-id': session,
    'user-agent': 'claude-cli/2.1.197 (external, cli)',
  })
  await sendStep(p, 'cc', 'main', mainStep(1, ['Read']), cc('sess-a'))
  await sendStep(p, 'cc', 'main', mainStep(2, ['Read']), cc('sess-a'))
  await sendStep(p, 'cc', 'main.sub-x', mainStep(1, []), cc('sess-a'))
  await sendStep(p, 'cc', 'main.s-other', mainStep(1, ['Read']), cc('sess-b'))
  await p.settled()
})
afterAll(() => p.close())

describe('the status line’s answer', () => {
  it('names the session’s agent, its last step’s cache share, and the cost of its agents only', async () => {
    const s = await statusFor(p.server.ctx, 'sess-a')
    expect(s).toMatchObject({ workspace: 'cc', agent: 'main', steps: 2 })
    expect(s?.last_read_share).toBeGreaterThan(0)
    const other = await statusFor(p.server.ctx, 'sess-b')
    expect(other).toMatchObject({ agent: 'main.s-other', steps: 1 })
    expect((s?.cost_usd ?? 0) + (other?.cost_usd ?? 0)).toBeGreaterThan(other?.cost_usd ?? 0)
    expect(statusText(s!)).toMatch(
      /^holdfast cc\/main · 2 steps \(last 002\) · cache \d+% · hold saved \$[\d.]+ · \$[\d.]+$/,
    )
  })

  it('names the agent’s latest miss and its cause, and keeps it as the session goes on', async () => {
    const cc = { 'x-claude-code-session-id': 'sess-miss', 'user-agent': 'claude-cli/2.1.197 (external, cli)' }
    await sendStep(p, 'cc', 'miss', mainStep(1, ['Read']), cc)
    await sendStep(p, 'cc', 'miss', mainStep(2, ['Read']), cc)
    await p.settled()
    expect((await statusFor(p.server.ctx, 'sess-miss'))?.last_miss).toBeNull()
    await sendStep(p, 'cc', 'miss', mainStep(3, ['Read'], true), cc) // the system prompt edited
    await sendStep(p, 'cc', 'miss', mainStep(4, ['Read'], true), cc)
    await p.settled()
    const s = await statusFor(p.server.ctx, 'sess-miss')
    expect(s?.last_miss).toEqual({ step: '003', cause: 'system_prompt_changed' })
    expect(statusText(s!)).toContain(' · last miss 003: system_prompt_changed · ')
  })

  it('has no answer for a session it has not seen', async () => {
    expect(await statusFor(p.server.ctx, 'nobody')).toBeUndefined()
  })

  it('counts subagents and side requests in a session, not a second session', () => {
    expect(
      ['main', 'main.aux', 'main.sub-1', 'main.sub-1.sub-2', 'main.s-2', 'mainly'].filter((n) =>
        inSession('main', n),
      ),
    ).toEqual(['main', 'main.aux', 'main.sub-1', 'main.sub-1.sub-2'])
  })
})
