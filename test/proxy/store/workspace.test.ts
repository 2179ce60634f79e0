/**
 * store/workspace: a workspace on disk. Covers: nothing exists until ensure(), which creates the
 * bare repository (HEAD → config/default, a starter providers.yaml git reads, the same starter commit
 * everywhere), the journal folder and the git hook, once however many callers race; a bad workspace name never becomes a path;
 * committedSteps reads the highest committed step; commitStep returns the commit or throws when the
 * branch cannot move; clearStaleLocks touches agent refs only; listWorkspaces lists folders.
 */
import fs from 'node:fs'
import path from 'node:path'
import { parseProviders } from '../../../proxy/store/config/providers'
import { RefLocked } from '../../../proxy/store/git/refs'
import { listWorkspaces, STARTER_PROVIDERS_YAML, Workspace } from '../../../proxy/store/workspace'
import { git, tempDir } from './git.support'

let home: string
beforeEach(() => {
  home = tempDir('holdfast-ws-')
})
afterEach(() => fs.rmSync(home, { recursive: true, force: true }))

const step = (agent: string, n: number) => ({
  agent,
  n,
  model: 'm',
  files: { 'request.json': Buffer.from(`{"n":${n}}`), 'meta.json': Buffer.from('{}') },
})

describe('Workspace.ensure', () => {
  it('creates nothing when constructed, then the repository, journal and hook on ensure', async () => {
    const ws = new Workspace(home, 'w')
    expect(ws.exists()).toBe(false)
    expect(fs.readdirSync(home)).toEqual([])
    await ws.ensure()
    const gitdir = path.join(home, 'workspaces', 'w', 'repo.git')
    expect(ws.repo.gitdir).toBe(gitdir)
    expect(ws.exists()).toBe(true)
    expect(fs.statSync(path.join(home, 'workspaces', 'w', 'journal')).isDirectory()).toBe(true)
    expect(git(gitdir, 'symbolic-ref', 'HEAD').trim()).toBe('refs/heads/config/default')
    expect(git(gitdir, 'show', 'config/default:providers.yaml')).toBe(STARTER_PROVIDERS_YAML)
    expect(parseProviders(STARTER_PROVIDERS_YAML, 'providers.yaml', {})).toEqual({
      ok: true,
      value: { roles: {} },
    })
    expect(git(gitdir, 'log', '--format=%s', 'config/default').trim()).toBe('config: starter providers.yaml')
    expect(ws.hookInstall).toMatchObject({ ok: true })
    expect(fs.statSync(path.join(gitdir, 'hooks', 'reference-transaction')).mode & 0o111).toBe(0o111)
    expect(git(gitdir, 'fsck', '--strict')).toBe('')
  })

  it('creates one root commit however many handles and callers race on a fresh workspace', async () => {
    const first = new Workspace(home, 'w')
    const p = first.ensure()
    expect(first.ensure()).toBe(p) // one promise per handle
    await Promise.all([p, new Workspace(home, 'w').ensure(), new Workspace(home, 'w').ensure()])
    const gitdir = first.repo.gitdir
    expect(git(gitdir, 'rev-list', '--all').trim().split('\n')).toHaveLength(1)
    // A later ensure on a used workspace keeps what is there.
    const { oids } = await first.commitSteps([step('main', 1)])
    const tip = git(gitdir, 'rev-parse', 'config/default').trim()
    await new Workspace(home, 'w').ensure()
    expect(git(gitdir, 'rev-parse', 'config/default').trim()).toBe(tip)
    expect(git(gitdir, 'rev-parse', 'agents/main').trim()).toBe(oids.get('main/1'))
  })

  // So machines sharing a remote share config history: the team's lineage fast-forwards each one's.
  it('starts every workspace, in any home, from the same starter commit', async () => {
    const other = tempDir('holdfast-ws-')
    try {
      const a = new Workspace(home, 'w')
      const b = new Workspace(other, 'elsewhere')
      await Promise.all([a.ensure(), b.ensure()])
      const root = git(a.repo.gitdir, 'rev-parse', 'config/default').trim()
      expect(git(b.repo.gitdir, 'rev-parse', 'config/default').trim()).toBe(root)
    } finally {
      fs.rmSync(other, { recursive: true, force: true })
    }
  })

  it('refuses a workspace name that is not one usable path and ref component', () => {
    for (const name of ['..', 'a/b', '', '.hidden', 'x.lock']) {
      expect(() => new Workspace(home, name)).toThrow(/workspace name/)
    }
    expect(fs.readdirSync(home)).toEqual([])
  })
})

describe('steps of a workspace', () => {
  let ws: Workspace
  beforeEach(async () => {
    ws = new Workspace(home, 'w')
    await ws.ensure()
  })

  it('reads the highest committed step of an agent, 0 when it has no branch', async () => {
    expect(await ws.committedSteps('main')).toBe(0)
    await ws.commitSteps([step('main', 1), step('main', 2), step('other', 1)])
    expect(await ws.committedSteps('main')).toBe(2)
    expect(await ws.committedSteps('other')).toBe(1)
    await ws.commitSteps([step('main', 1000)])
    expect(await ws.committedSteps('main')).toBe(1000) // numeric, not by name ("999" < "1000")
  })

  it('commits one step and returns the commit id git has at the branch tip', async () => {
    const oid = await ws.commitStep(step('main', 1))
    expect(git(ws.repo.gitdir, 'rev-parse', 'agents/main').trim()).toBe(oid)
    expect(git(ws.repo.gitdir, 'show', `${oid}:steps/main/001/request.json`)).toBe('{"n":1}')
  })

  it('throws from commitStep when the branch is locked by another writer, and moves nothing', async () => {
    const first = await ws.commitStep(step('main', 1))
    const lock = path.join(ws.repo.gitdir, 'refs/heads/agents/main.lock')
    fs.writeFileSync(lock, '')
    await expect(ws.commitStep(step('main', 2))).rejects.toBeInstanceOf(RefLocked)
    expect(git(ws.repo.gitdir, 'rev-parse', 'agents/main').trim()).toBe(first)
    expect(await ws.clearStaleLocks()).toEqual([lock])
    await ws.commitStep(step('main', 2))
    expect(await ws.committedSteps('main')).toBe(2)
  }, 10_000)

  it('clears stale locks on agent refs only, never a config lock', async () => {
    const config = path.join(ws.repo.gitdir, 'refs/heads/config/default.lock')
    fs.writeFileSync(config, '')
    expect(await ws.clearStaleLocks()).toEqual([])
    expect(fs.existsSync(config)).toBe(true)
  })

  it('names the agent journal folder and refuses an agent name that could escape it', () => {
    expect(ws.agentJournal('main')).toBe(path.join(home, 'workspaces', 'w', 'journal', 'main'))
    expect(() => ws.agentJournal('../x')).toThrow(/agent name/)
  })
})

describe('listWorkspaces', () => {
  it('lists the workspace folders, none when there is no workspaces folder, ignoring files', async () => {
    expect(await listWorkspaces(home)).toEqual([])
    await new Workspace(home, 'b').ensure()
    await new Workspace(home, 'a').ensure()
    fs.writeFileSync(path.join(home, 'workspaces', 'stray.txt'), '')
    expect((await listWorkspaces(home)).sort()).toEqual(['a', 'b'])
  })
})
