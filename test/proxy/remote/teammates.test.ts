/**
 * proxy/remote/teammates.ts: two homes (machines a and b) sharing one remote served by `git
 * daemon`: b fetches a's pushed agents into refs/holdfast/a/agents/*, reads them through a
 * TeammateWorkspace exactly as its own (steps, request bytes), never fetches over its own
 * namespace, and refuses to fetch "itself"; the view is read-only.
 */
import fs from 'node:fs'
import { fetchTeammates, TeammateWorkspace, teammates, thisMachine } from '../../../proxy/remote/teammates'
import { listSteps, readStepFile } from '../../../proxy/record/read'
import { Workspace } from '../../../proxy/store/workspace'
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream'
import {
  eventually,
  git,
  startProxy,
  tempHome,
  writeConfig,
  configFor,
  type Proxy,
} from '../../support/harness'
import { bareRepo, gitIn, type GitServer, startGitDaemon, tempDir } from '../../support/git-servers'

const remoteConfig = (machine: string) => ({
  machine,
  remote: { push_delay_ms: 50, retry_min_ms: 100, retry_max_ms: 400, fetch_interval_s: 0, timeout_s: 30 },
})

let base: string
let server: GitServer
let fake: FakeUpstream
let a: Proxy
let homeB: string
let url: string
beforeAll(async () => {
  base = tempDir()
  fake = await startFakeUpstream()
  server = await startGitDaemon(base)
  bareRepo(base, 'team.git')
  url = server.url('team.git')
  a = await startProxy({ fake, config: remoteConfig('a') })
  await new Workspace(a.home, 'default').ensure()
  git(a.repo(), 'remote', 'add', 'holdfast', url)
  for (const text of ['one', 'two'])
    await fetch(`${a.url}/w/default/a/main/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({
        model: 'claude-fake-1',
        max_tokens: 8,
        messages: [{ role: 'user', content: text }],
      }),
    }).then((r) => r.arrayBuffer())
  await a.settled()
  const tip = git(a.repo(), 'rev-parse', 'agents/main').trim()
  await eventually(
    () => gitIn(`${base}/team.git`, 'for-each-ref', '--format=%(objectname)').includes(tip),
    20_000,
    "a's push",
  )
  homeB = tempHome()
  writeConfig(homeB, configFor(fake, remoteConfig('b')))
  await new Workspace(homeB, 'default').ensure()
  git(`${homeB}/workspaces/default/repo.git`, 'remote', 'add', 'holdfast', url)
})
afterAll(async () => {
  await a.close()
  await server.stop()
  await fake.close()
  fs.rmSync(homeB, { recursive: true, force: true })
  fs.rmSync(base, { recursive: true, force: true })
})

describe('teammates', () => {
  it("brings another machine's agents in read-only and reads their steps byte for byte", async () => {
    const ws = new Workspace(homeB, 'default')
    const r = await fetchTeammates(ws, 'b', undefined, { timeoutMs: 30_000 })
    expect(r.changed).toEqual([{ machine: 'a', agent: 'main', how: 'new' }])
    expect(r.machines).toEqual(new Map([['a', ['main']]]))
    const view = new TeammateWorkspace(homeB, 'default', 'a')
    expect((await listSteps(view, 'main')).map((s) => [s.n, s.committed])).toEqual([
      [1, true],
      [2, true],
    ])
    const theirs = await readStepFile(view, 'main', 2, 'request.json')
    expect(theirs?.toString()).toBe(git(a.repo(), 'show', 'agents/main:steps/main/002/request.json'))
    await expect(view.ensure()).rejects.toThrow(/read-only/)
    // fetching again changes nothing
    expect((await fetchTeammates(ws, 'b', 'a', { timeoutMs: 30_000 })).changed).toEqual([])
  })

  it("never lists or fetches this machine's own namespace, and refuses to fetch it by name", async () => {
    const ws = new Workspace(homeB, 'default')
    // a sees no teammate: the only machine on the remote is itself
    expect(
      (await fetchTeammates(new Workspace(a.home, 'default'), 'a', undefined, { timeoutMs: 30_000 }))
        .machines,
    ).toEqual(new Map())
    expect(await teammates(ws, 'a')).toEqual(new Map())
    await expect(fetchTeammates(ws, 'b', 'b', { timeoutMs: 30_000 })).rejects.toThrow(/is this machine/)
  })

  it("names this machine from holdfast.yaml's machine, without creating the file", () => {
    expect(thisMachine(homeB)).toBe('b')
    const empty = tempDir('holdfast-home-')
    try {
      expect(thisMachine(empty)).toMatch(/^[A-Za-z0-9_-]+$/)
      expect(fs.readdirSync(empty)).toEqual([])
    } finally {
      fs.rmSync(empty, { recursive: true, force: true })
    }
  })
})
