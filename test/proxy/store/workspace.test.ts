/**
 * store/workspace: a workspace on disk. Covers: nothing exists until ensure(), which creates the
 * bare repository (HEAD → config/default, a starter providers.yaml git reads, the same starter commit
 * everywhere) and the journal folder, once however many callers race, and runs the caller's
 * `prepare` edge (the git hook) — a Workspace installs no hook of its own; a bad workspace name
 * never becomes a path; committedSteps reads the highest committed step; clearStaleLocks touches
 * agent refs only; listWorkspaces lists folders. (Committing is record/commit's: its tests.)
 */
import fs from 'node:fs'
import path from 'node:path'
import { parseProviders } from '../../../proxy/store/config/providers'
import { commitSteps } from '../../../proxy/record/commit/step-commits'
import { hookPreparer } from '../../../proxy/store/hook-install'
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
  it('creates nothing when constructed, then the repository and journal on ensure, and no hook', async () => {
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
    expect(fs.existsSync(path.join(gitdir, 'hooks', 'reference-transaction'))).toBe(false)
    expect(git(gitdir, 'fsck', '--strict')).toBe('')
  })

  it("runs the caller's prepare edge once the repository exists: the hook installer installs the hook", async () => {
    const ws = new Workspace(home, 'w', { prepare: hookPreparer() })
    await ws.ensure()
    const hook = path.join(ws.repo.gitdir, 'hooks', 'reference-transaction')
    expect(fs.statSync(hook).mode & 0o111).toBe(0o111)
    expect(git(ws.repo.gitdir, 'config', 'core.hooksPath').trim()).toBe(path.dirname(hook))
  })

  it('fails ensure when prepare throws, and tries again at the next call', async () => {
    let calls = 0
    const ws = new Workspace(home, 'w', {
      prepare: async () => {
        if (++calls === 1) throw new Error('no hook today')
      },
    })
    await expect(ws.ensure()).rejects.toThrow('no hook today')
    await ws.ensure()
    expect(calls).toBe(2)
  })

  it('creates one root commit however many handles and callers race on a fresh workspace', async () => {
    const first = new Workspace(home, 'w')
    const p = first.ensure()
    expect(first.ensure()).toBe(p) // one promise per handle
    await Promise.all([p, new Workspace(home, 'w').ensure(), new Workspace(home, 'w').ensure()])
    const gitdir = first.repo.gitdir
    expect(git(gitdir, 'rev-list', '--all').trim().split('\n')).toHaveLength(1)
    // A later ensure on a used workspace keeps what is there.
    const { oids } = await commitSteps(first.repo, [step('main', 1)])
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
    await commitSteps(ws.repo, [step('main', 1), step('main', 2), step('other', 1)])
    expect(await ws.committedSteps('main')).toBe(2)
    expect(await ws.committedSteps('other')).toBe(1)
    await commitSteps(ws.repo, [step('main', 1000)])
    expect(await ws.committedSteps('main')).toBe(1000) // numeric, not by name ("999" < "1000")
  })

  it('clears the lock files a crashed writer left on agent refs', async () => {
    const lock = path.join(ws.repo.gitdir, 'refs/heads/agents/main.lock')
    fs.mkdirSync(path.dirname(lock), { recursive: true })
    fs.writeFileSync(lock, '')
    expect(await ws.clearStaleLocks()).toEqual([lock])
    expect(fs.existsSync(lock)).toBe(false)
  })

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
