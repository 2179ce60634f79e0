/**
 * proxy/admin/recover: `POST /_holdfast/recover {workspace}` on a running proxy. Rules: only POST,
 * a workspace name that exists; an agent whose commit failed for good (its branch was broken by
 * hand, then mended) gets its journal steps committed, in order, once asked; what was done is
 * answered (requeued, landed, faults, agents).
 */
import { spawnSync } from 'node:child_process'
import { git, startProxy, type Proxy } from '../../support/harness'
import { postAnthropic } from '../../support/raw-http'

let p: Proxy
beforeAll(async () => {
  p = await startProxy()
})
afterAll(() => p.close())

const recover = (body: unknown, method = 'POST') =>
  fetch(`${p.url}/_holdfast/recover`, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(method === 'POST' ? { body: JSON.stringify(body) } : {}),
  })
const hello = (text: string) =>
  JSON.stringify({ model: 'claude-fake-1', max_tokens: 8, messages: [{ role: 'user', content: text }] })

/** Point `agents/<agent>` at a commit whose `steps/<agent>` is a file: every commit onto it fails for good. */
function breakBranch(agent: string): void {
  const repo = p.repo()
  const run = (args: string[], input?: string): string => {
    const r = spawnSync('git', ['-C', repo, ...args], { input, encoding: 'utf8' })
    if (r.status !== 0) throw new Error(r.stderr)
    return r.stdout.trim()
  }
  const blob = run(['hash-object', '-w', '--stdin'], 'not a directory\n')
  const inner = run(['mktree'], `100644 blob ${blob}\t${agent}\n`)
  const root = run(['mktree'], `040000 tree ${inner}\tsteps\n`)
  const commit = run(['commit-tree', root, '-m', 'broken by hand'])
  run(['update-ref', `refs/heads/agents/${agent}`, commit])
}

describe('POST /_holdfast/recover', () => {
  it('refuses another method, a body without a workspace, and a workspace that does not exist', async () => {
    expect((await recover(undefined, 'GET')).status).toBe(404)
    expect((await recover({})).status).toBe(400)
    expect((await recover({ workspace: 'nowhere' })).status).toBe(404)
  })

  it('commits, in order, the journal steps of an agent whose commit failed for good once its branch is mended', async () => {
    expect(
      (await postAnthropic(p.url, '/w/default/a/first/v1/messages', hello('make the workspace'))).status,
    ).toBe(200)
    await p.settled()
    breakBranch('mend')
    for (const t of ['m1', 'm2'])
      expect((await postAnthropic(p.url, '/w/default/a/mend/v1/messages', hello(t))).status).toBe(200)
    await p.settled()
    expect(p.server.ctx.agent('default', 'mend').stalled?.message).toMatch(
      /is a file where holdfast expects a directory/,
    )
    git(p.repo(), 'update-ref', '-d', 'refs/heads/agents/mend') // mended by hand
    const r = await recover({ workspace: 'default' })
    expect(r.status).toBe(200)
    const answer = (await r.json()) as {
      requeued: unknown
      landed: boolean
      faults: unknown[]
      agents: { agent: string; stalled: string | null; committed: number }[]
    }
    expect(answer).toMatchObject({ requeued: [{ agent: 'mend', steps: 2 }], landed: true, faults: [] })
    expect(answer.agents.find((a) => a.agent === 'mend')).toEqual({
      agent: 'mend',
      committed: 2,
      stalled: null,
    })
    expect(git(p.repo(), 'log', '--format=%s', 'agents/mend').trim().split('\n').slice(0, 2)).toEqual([
      'step 002: claude-fake-1 [mend]',
      'step 001: claude-fake-1 [mend]',
    ])
  })
})
