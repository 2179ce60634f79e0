/**
 * store/git/run: the one place holdfast runs git. Covers (beyond test/proxy/store/git.test.ts):
 * git's failure reaches the caller with git's own message, git runs with the allowlisted
 * environment (GIT_OBJECT_DIRECTORY cannot redirect it, PAGER/EDITOR do not trip simple-git's
 * guard). Merging packs (maintain) is test/proxy/store/git/merge.test.ts's.
 */
import fs from 'node:fs'
import path from 'node:path'
import { runGit } from '../../../../proxy/store/git/run'
import { configRepo } from '../git.support'

let dir: string
let gitdir: string
let root: string
beforeEach(async () => {
  ;({ dir, gitdir, root } = await configRepo('holdfast-run-'))
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
