/**
 * proxy/live/context, idle agents: an agent with nothing being numbered and no commit waiting, idle for
 * `limits.agent_idle_ms`, is forgotten by the running serve (its state is all on disk); its next
 * step numbers on from disk and is held against its previous record as before; an agent whose
 * commit still waits is never forgotten. An active agent keeps its newest journal file (what a
 * power cut takes off the branch is there); a forgotten one keeps none once all is committed.
 */
import fs from 'node:fs'
import path from 'node:path'
import { git, startProxy, type Proxy } from '../../support/harness'
import { postAnthropic } from '../../support/raw-http'

let p: Proxy
beforeAll(async () => {
  p = await startProxy({ config: { limits: { agent_idle_ms: 1000 } } })
})
afterAll(() => p.close())

const hello = (text: string) =>
  JSON.stringify({ model: 'claude-fake-1', max_tokens: 8, messages: [{ role: 'user', content: text }] })

describe('an idle agent', () => {
  it('is forgotten after limits.agent_idle_ms, and its next step numbers on from disk', async () => {
    for (const t of ['one', 'two'])
      expect((await postAnthropic(p.url, '/w/default/a/idle/v1/messages', hello(t))).status).toBe(200)
    await p.settled()
    const ctx = p.server.ctx
    const journal = path.join(p.home, 'workspaces', 'default', 'journal', 'idle')
    const logs = (): string[] =>
      (fs.existsSync(journal) ? fs.readdirSync(journal) : []).filter((f) => f.endsWith('.log'))
    expect(logs()).toHaveLength(1) // active: the newest file stays
    expect(ctx.forgetIdleAgents(Date.now())).toBe(0) // not idle long enough yet
    expect(ctx.forgetIdleAgents(Date.now() + 1000)).toBeGreaterThanOrEqual(1)
    expect(logs()).toEqual([]) // idle, everything committed: no file left
    expect([...ctx.agents.keys()]).not.toContain('default\0idle')
    expect((await postAnthropic(p.url, '/w/default/a/idle/v1/messages', hello('three'))).status).toBe(200)
    await p.settled()
    expect(git(p.repo(), 'log', '-1', '--format=%s', 'agents/idle').trim()).toBe(
      'step 003: claude-fake-1 [idle]',
    )
  })

  it('is never forgotten while a commit of its waits', async () => {
    const ctx = p.server.ctx
    const agent = ctx.agent('default', 'waiting')
    let release!: () => void
    const landed = agent.queueCommit(
      1,
      new Promise((_, reject) => (release = () => reject(new Error('never finished')))),
    )
    ctx.forgetIdleAgents(Date.now() + 60_000)
    expect(ctx.agents.get('default\0waiting')).toBe(agent)
    release()
    await landed
  })
})
