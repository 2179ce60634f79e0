/**
 * store/git/run: the one place holdfast runs git. Covers (beyond test/proxy/store/git.test.ts):
 * git's failure reaches the caller with git's own message, git runs with the allowlisted
 * environment (GIT_OBJECT_DIRECTORY cannot redirect it, PAGER/EDITOR do not trip simple-git's
 * guard), maintain merges the many small packs step commits leave without losing an object, and
 * drops the handle's pack cache even when git fails.
 */
import fs from 'node:fs'
import path from 'node:path'
import { commitFiles, initRepo } from '../../../../proxy/store/git'
import { openRepo } from '../../../../proxy/store/git/repo'
import { maintain, runGit } from '../../../../proxy/store/git/run'
import { git, packFiles, tempDir } from '../git.support'

let dir: string
let gitdir: string
let root: string
beforeEach(async () => {
  dir = tempDir('holdfast-run-')
  gitdir = path.join(dir, 'repo.git')
  root = await initRepo(gitdir, {
    files: { 'providers.yaml': 'roles: {}\n' },
    message: 'root',
    branch: 'config/default',
  })
})
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

/** Set environment variables for the duration of `fn`. */
async function withEnv<T>(vars: Record<string, string>, fn: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]))
  Object.assign(process.env, vars)
  try {
    return await fn()
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k]
      else process.env[k] = v
    }
  }
}

describe('runGit', () => {
  it("runs in the bare repository and rejects with git's own message when git fails", async () => {
    expect((await runGit(gitdir, ['rev-parse', 'config/default'])).trim()).toBe(root)
    await expect(runGit(gitdir, ['rev-parse', '--verify', 'refs/heads/nope'])).rejects.toThrow(
      /fatal: Needed a single revision/,
    )
  })

  it('is not redirected by GIT_OBJECT_DIRECTORY and not refused for PAGER or EDITOR in the environment', async () => {
    const empty = path.join(dir, 'empty-objects')
    fs.mkdirSync(empty)
    const type = await withEnv(
      { GIT_OBJECT_DIRECTORY: empty, PAGER: 'less', EDITOR: 'vi', GIT_EDITOR: 'vi' },
      () => runGit(gitdir, ['cat-file', '-t', root]),
    )
    expect(type.trim()).toBe('commit')
  })
})

describe('maintain', () => {
  it('merges the small packs of many commits into fewer, keeping every object, fsck-clean', async () => {
    const repo = openRepo(gitdir)
    let tip = root
    for (let i = 0; i < 8; i++) {
      tip = await commitFiles(repo, {
        parent: tip,
        files: { [`steps/a/00${i + 1}/request.json`]: `{"n":${i}}` },
        message: `step ${i}`,
      })
    }
    git(gitdir, 'update-ref', 'refs/heads/agents/a', tip)
    const objects = (): string => git(gitdir, 'cat-file', '--batch-all-objects', '--batch-check')
    const before = { packs: packFiles(gitdir).length, objects: objects() }
    expect(before.packs).toBe(9)
    const cache = repo.cache
    await maintain(gitdir)
    expect(packFiles(gitdir).length).toBeLessThan(before.packs)
    expect(objects()).toBe(before.objects)
    expect(repo.cache).not.toBe(cache)
    expect(git(gitdir, 'show', 'agents/a:steps/a/008/request.json')).toBe('{"n":7}')
    expect(git(gitdir, 'fsck', '--strict', '--no-dangling')).toBe('')
  })

  it('drops the pack cache even when git fails, and passes the failure on', async () => {
    const notRepo = path.join(dir, 'not-a-repo')
    fs.mkdirSync(notRepo)
    const handle = openRepo(notRepo)
    const cache = handle.cache
    await expect(maintain(notRepo)).rejects.toThrow(/not a git repository/)
    expect(handle.cache).not.toBe(cache)
  })
})
