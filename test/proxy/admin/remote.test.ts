/**
 * proxy/admin/remote.ts: `POST /_holdfast/remote/sync {workspace}` makes a running serve look at
 * the workspace's remote now (what `holdfast remote set` asks): it pushes what the remote lacks in
 * the background and answers the config pull's report; a workspace without the remote answers
 * `remote: false`; an unknown workspace is NOT_FOUND and a body without a workspace BAD_REQUEST.
 */
import fs from 'node:fs'
import { readTokenFile } from '../../../proxy/store/token'
import { eventually, git, startProxy, type Proxy } from '../../support/harness'
import { bareRepo, gitIn, type GitServer, startGitDaemon, tempDir } from '../../support/git-servers'

let p: Proxy
let base: string
let server: GitServer
beforeAll(async () => {
  base = tempDir()
  server = await startGitDaemon(base)
  p = await startProxy({ config: { machine: 'a', remote: { fetch_interval_s: 0, push_delay_ms: 50 } } })
})
afterAll(async () => {
  await p.close()
  await server.stop()
  fs.rmSync(base, { recursive: true, force: true })
})

const sync = (body: unknown) => {
  const token = readTokenFile(p.home)
  return fetch(`${p.url}/_holdfast/remote/sync`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { 'x-holdfast-token': token } : {}) },
    body: JSON.stringify(body),
  })
}

const step = () =>
  fetch(`${p.url}/w/default/a/main/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({
      model: 'claude-fake-1',
      max_tokens: 8,
      messages: [{ role: 'user', content: 'hi' }],
    }),
  }).then((r) => r.arrayBuffer())

describe('POST /_holdfast/remote/sync', () => {
  it('answers remote: false for a workspace without a remote named holdfast', async () => {
    await step()
    await p.settled()
    const r = await sync({ workspace: 'default' })
    expect(r.status).toBe(200)
    expect(await r.json()).toEqual({ workspace: 'default', remote: false, config: null })
  })

  it('pushes what the remote lacks and answers the config pull once the remote is set', async () => {
    const bare = bareRepo(base, 'team.git')
    git(p.repo(), 'remote', 'add', 'holdfast', server.url('team.git'))
    git(p.repo(), 'push', '--quiet', 'holdfast', 'config/default')
    const r = await sync({ workspace: 'default' })
    expect(r.status).toBe(200)
    const body = (await r.json()) as {
      remote: boolean
      config: { lineages: { lineage: string; outcome: string }[] }
    }
    expect(body.remote).toBe(true)
    expect(body.config.lineages).toEqual([
      expect.objectContaining({ lineage: 'default', outcome: 'up-to-date' }),
    ])
    const tip = git(p.repo(), 'rev-parse', 'agents/main').trim()
    await eventually(
      () =>
        gitIn(bare, 'for-each-ref', '--format=%(refname) %(objectname)').includes(
          `refs/holdfast/a/agents/main ${tip}`,
        ),
      20_000,
      'the agent pushed',
    )
  })

  it('refuses an unknown workspace and a body without one', async () => {
    const unknown = await sync({ workspace: 'nope' })
    expect(unknown.status).toBe(404)
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND')
    const bad = await sync({})
    expect(bad.status).toBe(400)
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('BAD_REQUEST')
  })
})
