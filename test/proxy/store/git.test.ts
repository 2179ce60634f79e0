import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import {
  casRef,
  clearStaleLocks,
  commitFiles,
  initRepo,
  isAncestor,
  listDir,
  listRefs,
  maintain,
  mergeBase,
  openRepo,
  readCommitInfo,
  readFileAt,
  readHeadTarget,
  readRef,
  RefConflict,
  RefLocked,
  resolveRevision,
  runGit,
  type Repo,
} from '../../../proxy/store/git'
import { Lru } from '../../../proxy/store/git/repo'

const PROVIDERS = 'roles: {}\n'

/** Real git, with no GIT_* variable of ours and no user or system config. */
function gitEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GIT_')) env[k] = v
  return { ...env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' }
}
function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    env: gitEnv(),
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  })
}
function gitBytes(cwd: string, ...args: string[]): Buffer {
  return execFileSync('git', args, { cwd, env: gitEnv(), stdio: ['ignore', 'pipe', 'pipe'] })
}

let dir: string
let gitdir: string
let repo: Repo
let root: string

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'holdfast-git-'))
  gitdir = join(dir, 'repo.git')
  root = await initRepo(gitdir, {
    files: { 'providers.yaml': PROVIDERS },
    message: 'config: initial',
    branch: 'config/default',
  })
  repo = openRepo(gitdir)
})
afterEach(() => {
  rmSync(dir, { recursive: true, force: true })
})

/** Commit one step of `agent` on its branch, moving the ref by CAS from the current tip. */
async function step(agent: string, n: number, body: Buffer | string = `{"step":${n}}`): Promise<string> {
  const ref = `refs/heads/agents/${agent}`
  const parent = (await readRef(repo, ref)) ?? root
  const nnn = String(n).padStart(3, '0')
  const oid = await commitFiles(repo, {
    parent,
    files: {
      [`steps/${agent}/${nnn}/request.json`]: Buffer.from(body),
      [`steps/${agent}/${nnn}/meta.json`]: Buffer.from('{}'),
    },
    message: `step ${nnn}`,
  })
  await casRef(repo, ref, oid, parent === root && n === 1 ? null : parent)
  return oid
}

describe('initRepo', () => {
  it('makes a bare repository whose HEAD is config/default and that git clone can clone', () => {
    expect(git(gitdir, 'rev-parse', '--is-bare-repository').trim()).toBe('true')
    expect(git(gitdir, 'symbolic-ref', 'HEAD').trim()).toBe('refs/heads/config/default')
    expect(git(gitdir, 'log', '--format=%H %s').trim()).toBe(`${root} config: initial`)
    expect(git(gitdir, 'log', '--format=%an <%ae>', '-1').trim()).toBe('holdfast <holdfast@localhost>')
    const clone = join(dir, 'clone')
    git(dir, 'clone', '--quiet', gitdir, clone)
    expect(readFileSync(join(clone, 'providers.yaml'), 'utf8')).toBe(PROVIDERS)
    expect(git(clone, 'rev-parse', '--abbrev-ref', 'HEAD').trim()).toBe('config/default')
    expect(git(gitdir, 'fsck', '--strict')).toBe('')
  })

  it('is idempotent and keeps one root commit when two callers race on a fresh directory', async () => {
    const opts = {
      files: { 'providers.yaml': PROVIDERS },
      message: 'config: initial',
      branch: 'config/default',
    }
    expect(await initRepo(gitdir, opts)).toBe(root)
    const other = join(dir, 'other.git')
    const [a, b] = await Promise.all([
      initRepo(other, opts),
      initRepo(other, { ...opts, files: { 'providers.yaml': 'roles: {x: 1}\n' } }),
    ])
    expect(a).toBe(b)
    expect(git(other, 'rev-list', '--all').trim().split('\n')).toEqual([a])
    expect(await readHeadTarget(openRepo(other))).toBe('refs/heads/config/default')
  })
})

describe('commitFiles', () => {
  it('stores the exact bytes at steps/<agent>/<NNN>/ and keeps the parent files', async () => {
    const bytes = Buffer.concat([Buffer.from('{"model":"m","x":"\u00e9"}\r\n'), Buffer.from([0, 0xff, 0xfe])])
    const c1 = await step('main', 1, bytes)
    expect(gitBytes(gitdir, 'show', 'agents/main:steps/main/001/request.json').equals(bytes)).toBe(true)
    expect(git(gitdir, 'show', 'agents/main:providers.yaml')).toBe(PROVIDERS)
    const c2 = await step('main', 2)
    expect(git(gitdir, 'ls-tree', '-r', '--name-only', 'agents/main').trim().split('\n')).toEqual([
      'providers.yaml',
      'steps/main/001/meta.json',
      'steps/main/001/request.json',
      'steps/main/002/meta.json',
      'steps/main/002/request.json',
    ])
    expect(git(gitdir, 'rev-parse', `${c1}:steps/main/001`)).toBe(
      git(gitdir, 'rev-parse', `${c2}:steps/main/001`),
    )
    expect(git(gitdir, 'rev-list', '--parents', '-1', c2).trim()).toBe(`${c2} ${c1}`)
    expect(git(gitdir, 'fsck', '--strict', '--no-dangling')).toBe('')
    expect((await readFileAt(repo, c2, 'steps/main/001/request.json'))?.equals(bytes)).toBe(true)
  })

  it('reads files, directories and commit info back, and undefined where nothing is', async () => {
    const c1 = await step('main', 1)
    expect(await listDir(repo, c1, '')).toEqual([
      { name: 'providers.yaml', type: 'blob', oid: expect.stringMatching(/^[0-9a-f]{40}$/) as unknown },
      { name: 'steps', type: 'tree', oid: git(gitdir, 'rev-parse', `${c1}:steps`).trim() },
    ])
    expect((await listDir(repo, c1, 'steps/main/001'))?.map((e) => e.name)).toEqual([
      'meta.json',
      'request.json',
    ])
    expect(await listDir(repo, c1, 'providers.yaml')).toBeUndefined()
    expect(await listDir(repo, c1, 'steps/nobody')).toBeUndefined()
    expect(await readFileAt(repo, c1, 'steps')).toBeUndefined()
    expect(await readFileAt(repo, c1, 'providers.yaml/x')).toBeUndefined()
    const info = await readCommitInfo(repo, c1)
    expect(info).toMatchObject({ oid: c1, parents: [root], message: 'step 001\n' })
    expect(info.tree).toBe(git(gitdir, 'rev-parse', `${c1}^{tree}`).trim())
    expect(info.author).toMatchObject({ name: 'holdfast', email: 'holdfast@localhost' })
  })

  it('takes an author and a timestamp, and with no files keeps the parent tree', async () => {
    const author = { name: 'Ada', email: 'ada@example.com', timestamp: 1_700_000_000 }
    const c = await commitFiles(repo, { parent: root, files: {}, message: 'empty', author })
    expect(git(gitdir, 'log', '-1', '--format=%an <%ae> %at %s', c).trim()).toBe(
      'Ada <ada@example.com> 1700000000 empty',
    )
    expect((await readCommitInfo(repo, c)).tree).toBe((await readCommitInfo(repo, root)).tree)
  })

  it('refuses unusable paths and a path that is a file in one place and a directory in another', async () => {
    for (const p of ['', 'a//b', './a', 'a/../b', '.git/config', 'a/', 'nul\0']) {
      await expect(
        commitFiles(repo, { parent: root, files: { [p]: Buffer.from('x') }, message: 'm' }),
      ).rejects.toThrow(/not usable/)
    }
    const files = { a: Buffer.from('1'), 'a/b': Buffer.from('2') }
    await expect(commitFiles(repo, { parent: root, files, message: 'm' })).rejects.toThrow(/both a file/)
    await expect(
      commitFiles(repo, { parent: root, files: { 'providers.yaml/x': Buffer.from('1') }, message: 'm' }),
    ).rejects.toThrow(/exists as a blob/)
  })

  it('leaves no temp files in objects/ after commits', async () => {
    for (let n = 1; n <= 5; n++) await step('main', n)
    const leftovers = readdirSync(join(gitdir, 'objects'), { recursive: true }).filter((f) =>
      String(f).includes('tmp'),
    )
    expect(leftovers).toEqual([])
  })
})

describe('casRef', () => {
  const ref = 'refs/heads/agents/x'

  it('creates a new ref with expected null and refuses null once the ref exists', async () => {
    await casRef(repo, ref, root, null)
    expect(await readRef(repo, ref)).toBe(root)
    expect(readFileSync(join(gitdir, ref), 'utf8')).toBe(`${root}\n`)
    const err = await casRef(repo, ref, root, null).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(RefConflict)
    expect(err).toMatchObject({ ref, expected: null, actual: root })
    expect(existsSync(join(gitdir, `${ref}.lock`))).toBe(false)
  })

  it('refuses a stale expected value and leaves the ref unchanged', async () => {
    const c1 = await step('x', 1)
    const c2 = await step('x', 2)
    const c3 = await commitFiles(repo, { parent: c1, files: { f: Buffer.from('3') }, message: 'm' })
    await expect(casRef(repo, ref, c3, c1)).rejects.toThrow(new RefConflict(ref, c1, c2).message)
    expect(await readRef(repo, ref)).toBe(c2)
    expect(existsSync(join(gitdir, `${ref}.lock`))).toBe(false)
  })

  it('refuses while someone else holds <ref>.lock, after retries, and leaves that lock alone', async () => {
    await casRef(repo, ref, root, null)
    const c = await commitFiles(repo, { parent: root, files: { f: Buffer.from('1') }, message: 'm' })
    const lock = join(gitdir, `${ref}.lock`)
    writeFileSync(lock, 'someone else\n')
    const started = Date.now()
    const err = await casRef(repo, ref, c, root, { retries: 3, backoffMs: 5 }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(RefLocked)
    expect((err as RefLocked).message).toContain(lock)
    expect(Date.now() - started).toBeGreaterThanOrEqual(15)
    expect(readFileSync(lock, 'utf8')).toBe('someone else\n')
    expect(await readRef(repo, ref)).toBe(root)
  })

  it('refuses malformed ref names and object ids before touching the disk', async () => {
    for (const bad of ['refs/heads/../x', 'heads/x', 'refs/heads/a.lock', 'refs/heads/a b', 'refs/']) {
      await expect(casRef(repo, bad, root, null)).rejects.toThrow(/not a usable ref name/)
    }
    await expect(casRef(repo, ref, 'abc', null)).rejects.toThrow(/not a full object id/)
  })
})

describe('concurrency', () => {
  it('commits 8 agents × 10 steps at once: every branch linear with 10 commits, fsck clean', async () => {
    const agents = Array.from({ length: 8 }, (_, i) => `a${i}`)
    await Promise.all(
      agents.map(async (agent) => {
        for (let n = 1; n <= 10; n++) await step(agent, n)
      }),
    )
    for (const agent of agents) {
      const lines = git(gitdir, 'rev-list', '--parents', `${root}..agents/${agent}`).trim().split('\n')
      expect(lines).toHaveLength(10)
      expect(lines.every((l) => l.split(' ').length === 2)).toBe(true)
      const files = git(gitdir, 'ls-tree', '-r', '--name-only', `agents/${agent}`).trim().split('\n')
      expect(files).toHaveLength(21)
    }
    expect(git(gitdir, 'fsck', '--strict', '--no-dangling')).toBe('')
  })

  it('lets exactly one of two writers racing on one ref win each round, losing no update', async () => {
    const ref = 'refs/heads/agents/race'
    await casRef(repo, ref, root, null)
    const winners: string[] = []
    for (let round = 0; round < 15; round++) {
      const tip = (await readRef(repo, ref)) as string
      const results = await Promise.allSettled(
        ['w1', 'w2'].map(async (w) => {
          const oid = await commitFiles(repo, {
            parent: tip,
            files: { [`${w}/${round}`]: Buffer.from(w) },
            message: w,
          })
          await casRef(repo, ref, oid, tip)
          return oid
        }),
      )
      const won = results.filter((r) => r.status === 'fulfilled')
      const lost = results.filter((r) => r.status === 'rejected')
      expect(won).toHaveLength(1)
      expect((lost[0] as PromiseRejectedResult).reason).toBeInstanceOf(RefConflict)
      winners.push((won[0] as PromiseFulfilledResult<string>).value)
    }
    const chain = git(gitdir, 'rev-list', '--reverse', `${root}..${ref}`).trim().split('\n')
    expect(chain).toEqual(winners)
  })
})

describe('readRef and listRefs', () => {
  it('read packed refs after git pack-refs, and a loose ref overrides a packed one', async () => {
    const c1 = await step('p', 1)
    const c2 = await step('q', 1)
    git(gitdir, 'pack-refs', '--all')
    expect(existsSync(join(gitdir, 'refs/heads/agents/p'))).toBe(false)
    expect(await readRef(repo, 'refs/heads/agents/p')).toBe(c1)
    expect(await readRef(repo, 'HEAD')).toBe(root)
    expect(await listRefs(repo, 'refs/heads/agents/')).toEqual([
      { ref: 'refs/heads/agents/p', oid: c1 },
      { ref: 'refs/heads/agents/q', oid: c2 },
    ])
    const c3 = await step('p', 2)
    expect(readFileSync(join(gitdir, 'packed-refs'), 'utf8')).toContain(`${c1} refs/heads/agents/p`)
    expect(await readRef(repo, 'refs/heads/agents/p')).toBe(c3)
    expect(await listRefs(repo, 'refs/heads/')).toEqual([
      { ref: 'refs/heads/agents/p', oid: c3 },
      { ref: 'refs/heads/agents/q', oid: c2 },
      { ref: 'refs/heads/config/default', oid: root },
    ])
    expect(await listRefs(repo, 'refs/heads/config/')).toEqual([
      { ref: 'refs/heads/config/default', oid: root },
    ])
    expect(await readRef(repo, 'refs/heads/agents/none')).toBeUndefined()
    expect(await listRefs(repo, 'refs/heads/nothing/')).toEqual([])
  })

  it('clearStaleLocks removes *.lock files under refs/heads/<prefix> only', async () => {
    await step('s', 1)
    writeFileSync(join(gitdir, 'refs/heads/agents/s.lock'), '')
    writeFileSync(join(gitdir, 'refs/heads/config/default.lock'), '')
    const removed = await clearStaleLocks(gitdir, 'agents')
    expect(removed).toEqual([join(gitdir, 'refs/heads/agents/s.lock')])
    expect(existsSync(join(gitdir, 'refs/heads/config/default.lock'))).toBe(true)
    expect(await listRefs(repo, 'refs/heads/agents/')).toHaveLength(1)
  })
})

describe('real git beside', () => {
  it('respects a git update-ref between our commits, and git respects our lock', async () => {
    const ref = 'refs/heads/agents/main'
    const c1 = await step('main', 1)
    const c2 = await commitFiles(repo, { parent: c1, files: { f: Buffer.from('ours') }, message: 'ours' })
    git(gitdir, 'update-ref', ref, root, c1)
    await expect(casRef(repo, ref, c2, c1)).rejects.toBeInstanceOf(RefConflict)
    expect(await readRef(repo, ref)).toBe(root)
    await casRef(repo, ref, c2, root)
    expect(git(gitdir, 'rev-parse', ref).trim()).toBe(c2)
    writeFileSync(join(gitdir, `${ref}.lock`), '')
    expect(() => git(gitdir, 'update-ref', ref, c1, c2)).toThrow(/lock/)
  })

  it('runGit scrubs GIT_DIR and GIT_INDEX_FILE, and reads survive maintain repacking everything', async () => {
    const c1 = await step('main', 1)
    await readFileAt(repo, c1, 'providers.yaml')
    const saved = { dir: process.env.GIT_DIR, index: process.env.GIT_INDEX_FILE }
    process.env.GIT_DIR = join(dir, 'nowhere')
    process.env.GIT_INDEX_FILE = join(dir, 'index')
    try {
      expect((await runGit(gitdir, ['rev-parse', '--is-bare-repository'])).trim()).toBe('true')
      await maintain(gitdir)
    } finally {
      for (const [k, v] of [['GIT_DIR', saved.dir] as const, ['GIT_INDEX_FILE', saved.index] as const]) {
        if (v === undefined) delete process.env[k]
        else process.env[k] = v
      }
    }
    expect(git(gitdir, 'count-objects', '-v')).toMatch(/^count: 0$/m)
    const fresh: Repo = { ...repo, cache: {}, trees: new Lru(10), commitTrees: new Lru(10) } // nothing cached
    expect((await readFileAt(fresh, c1, 'steps/main/001/request.json'))?.toString()).toBe('{"step":1}')
    expect(await readRef(repo, 'refs/heads/agents/main')).toBe(c1)
    const c2 = await step('main', 2)
    expect(await isAncestor(repo, c1, c2)).toBe(true)
    expect(git(gitdir, 'fsck', '--strict', '--no-dangling')).toBe('')
  })
})

describe('ancestry and revisions', () => {
  it('answers isAncestor and mergeBase as git merge-base does', async () => {
    const a1 = await step('a', 1)
    const a2 = await step('a', 2)
    const b1 = await step('b', 1)
    expect(await isAncestor(repo, root, a2)).toBe(true)
    expect(await isAncestor(repo, a1, a1)).toBe(true)
    expect(await isAncestor(repo, a2, a1)).toBe(false)
    expect(await isAncestor(repo, b1, a2)).toBe(false)
    expect(await mergeBase(repo, a2, b1)).toBe(root)
    expect(await mergeBase(repo, a1, a2)).toBe(a1)
    const lone = await commitFiles(repo, {
      parent: undefined,
      files: { x: Buffer.from('x') },
      message: 'lone',
    })
    expect(await mergeBase(repo, lone, a2)).toBeUndefined()
  })

  it('resolves full oids, unique prefixes, refs, HEAD and short branch names', async () => {
    const c1 = await step('main', 1)
    expect(await resolveRevision(repo, c1)).toBe(c1)
    expect(await resolveRevision(repo, c1.slice(0, 10))).toBe(c1)
    expect(await resolveRevision(repo, 'refs/heads/agents/main')).toBe(c1)
    expect(await resolveRevision(repo, 'agents/main')).toBe(c1)
    expect(await resolveRevision(repo, 'config/default')).toBe(root)
    expect(await resolveRevision(repo, 'HEAD')).toBe(root)
    expect(await resolveRevision(repo, 'agents/nobody')).toBeUndefined()
    expect(await resolveRevision(repo, '0000000000')).toBeUndefined()
    expect(await resolveRevision(repo, '0'.repeat(40))).toBeUndefined()
    await expect(resolveRevision(repo, '../../etc')).rejects.toThrow(/not a ref name/)
    const blob = git(gitdir, 'rev-parse', `${c1}:providers.yaml`).trim()
    await expect(resolveRevision(repo, blob)).rejects.toThrow(/does not name a commit/)
  })
})
