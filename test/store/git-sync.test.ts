import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { casRef, commitFiles, initRepo, maintain, openRepo, readFileAt, readRef } from '../../src/store/git'
import { useSyncFs } from '../../src/store/git-repo'

let dir: string
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'holdfast-git-sync-'))
})
afterEach(() => {
  rmSync(dir, { recursive: true, force: true })
})

describe('useSyncFs', () => {
  it('writes the same valid repository with synchronous fs calls, leaving no temp files', async () => {
    useSyncFs()
    const gitdir = join(dir, 'repo.git')
    const root = await initRepo(gitdir, {
      files: { 'providers.yaml': 'roles: {}\n' },
      message: 'init',
      branch: 'config/default',
    })
    const repo = openRepo(gitdir)
    let tip = root
    await Promise.all(
      ['a', 'b'].map(async (agent) => {
        let parent: string | null = null
        for (let n = 1; n <= 5; n++) {
          const files = { [`steps/${agent}/00${n}/request.json`]: Buffer.from(`{"${agent}":${n}}`) }
          const oid = await commitFiles(repo, { parent: parent ?? root, files, message: `step ${n}` })
          await casRef(repo, `refs/heads/agents/${agent}`, oid, parent)
          parent = oid
        }
        if (agent === 'a') tip = parent as string
      }),
    )
    expect(await readRef(repo, 'refs/heads/agents/a')).toBe(tip)
    expect((await readFileAt(repo, tip, 'steps/a/003/request.json'))?.toString()).toBe('{"a":3}')
    const env = { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' }
    expect(
      execFileSync('git', ['fsck', '--strict', '--no-dangling'], { cwd: gitdir, env, encoding: 'utf8' }),
    ).toBe('')
    expect(
      readdirSync(join(gitdir, 'objects'), { recursive: true }).filter((f) => String(f).includes('tmp')),
    ).toEqual([])
    await maintain(gitdir)
    expect((await readFileAt(repo, tip, 'steps/a/005/request.json'))?.toString()).toBe('{"a":5}')
  })
})
