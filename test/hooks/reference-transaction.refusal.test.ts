/**
 * The hook refuses a config/* update whose providers.yaml is invalid, with real git: a push from a
 * clone and a commit in a work tree linked to the bare repository; the ref does not move and the
 * message names the file, the role and the key. Deleting a config ref is allowed. GIT_DIR,
 * GIT_INDEX_FILE and friends in the hook's environment do not redirect what it reads.
 */
import fs from 'node:fs'
import path from 'node:path'
import { HOOK_NAME } from '../../proxy/store/hook-install'
import { GIT_LOCAL_ENV, stripGitEnv } from '../../proxy/process/spawn'
import {
  cleanup,
  cloneWithProviders,
  commitObject,
  editProviders,
  git,
  gitOk,
  homeWithWorkspace,
  IDENTITY,
  run,
  tempDir,
  tipOf,
  ZERO,
} from './helpers'

let repo: string
beforeAll(async () => {
  ;({ repo } = await homeWithWorkspace('demo'))
})
afterAll(cleanup)

const refusing = (ref = 'refs/heads/config/default') => `holdfast: refusing ${ref}: providers.yaml: `
const UNDECLARED = 'roles:\n  reviewer: {provider: nope, model: claude-x}\n'
const UNDECLARED_SAYS =
  'roles.reviewer.provider: "nope" is not a provider row in holdfast.yaml (declared: anthropic, openai)'
const UNKNOWN_KEY = 'roles:\n  reviewer: {provider: anthropic, model: claude-x, colour: red}\n'
const GOOD = 'roles:\n  reviewer: {provider: anthropic, model: claude-reviewer}\n'

describe('git push from a clone', () => {
  it('refuses a role naming an undeclared provider row, then an unknown key; the ref does not move', async () => {
    const before = await tipOf(repo)
    const clone = await cloneWithProviders(repo, UNDECLARED)
    const first = await git(clone, ['push', 'origin', 'config/default'])
    expect(first.code).not.toBe(0)
    expect(first.stderr).toContain(refusing() + UNDECLARED_SAYS + '\n')
    expect(await tipOf(repo)).toBe(before)

    await editProviders(clone, UNKNOWN_KEY)
    const second = await git(clone, ['push', 'origin', 'config/default'])
    expect(second.code).not.toBe(0)
    expect(second.stderr).toContain(refusing() + 'roles.reviewer: unknown key "colour"\n')
    expect(await tipOf(repo)).toBe(before)
  })
})

describe('git commit in a work tree linked to the bare repository', () => {
  it('refuses a bad providers.yaml and accepts a good one', async () => {
    const work = tempDir()
    // GIT_INDEX_FILE keeps the index out of repo.git; git passes it (and GIT_DIR) on to the hook.
    const env = { GIT_INDEX_FILE: path.join(tempDir(), 'index') }
    const linked = ['--git-dir', repo, '--work-tree', work]
    await gitOk(work, [...linked, 'read-tree', 'config/default'], { env })
    const commit = async (text: string) => {
      fs.writeFileSync(path.join(work, 'providers.yaml'), text)
      await gitOk(work, [...linked, 'add', 'providers.yaml'], { env })
      return git(work, [...linked, ...IDENTITY, 'commit', '-q', '-m', 'config: edit'], { env })
    }
    const before = await tipOf(repo)
    const bad = await commit(UNDECLARED)
    expect(bad.code).not.toBe(0)
    expect(bad.stderr).toContain(refusing() + UNDECLARED_SAYS + '\n')
    expect(await tipOf(repo)).toBe(before)

    const good = await commit(GOOD)
    expect(good).toMatchObject({ code: 0, stderr: '' })
    expect(await tipOf(repo)).not.toBe(before)
    expect(await gitOk(repo, ['show', 'config/default:providers.yaml'])).toBe(GOOD.trimEnd())
  })
})

describe('other config updates', () => {
  it('allows deleting a config ref, and refuses a config commit without providers.yaml', async () => {
    const tip = await tipOf(repo)
    await gitOk(repo, ['-c', 'core.hooksPath=/dev/null', 'update-ref', 'refs/heads/config/scratch', tip])
    await gitOk(repo, ['update-ref', '-d', 'refs/heads/config/scratch'])
    expect(await git(repo, ['rev-parse', '--verify', '-q', 'config/scratch'])).toMatchObject({ code: 1 })

    const empty = await commitObject(repo, { 'README.md': 'no roles here\n' })
    const r = await git(repo, ['update-ref', 'refs/heads/config/empty', empty])
    expect(r.code).not.toBe(0)
    expect(r.stderr).toContain(`${refusing('refs/heads/config/empty')}no such file at ${empty.slice(0, 8)}`)
  })
})

describe("the hook's environment", () => {
  it('strips the variables git uses to find a repository, and nothing else', () => {
    const env: NodeJS.ProcessEnv = { PATH: '/bin', HOLDFAST_HOOK_TRACE: 't', GIT_CONFIG_KEY_0: 'x' }
    // Named here, not only read from GIT_LOCAL_ENV: dropping one of these from the list must fail.
    for (const key of [
      'GIT_DIR',
      'GIT_INDEX_FILE',
      'GIT_WORK_TREE',
      'GIT_OBJECT_DIRECTORY',
      'GIT_COMMON_DIR',
    ])
      env[key] = 'decoy'
    env.GIT_ALTERNATE_OBJECT_DIRECTORIES = 'decoy'
    for (const key of GIT_LOCAL_ENV) env[key] = 'decoy'
    stripGitEnv(env)
    expect(env).toEqual({ PATH: '/bin', HOLDFAST_HOOK_TRACE: 't' })
  })

  it('reads the repository it is installed in, whatever GIT_DIR, GIT_INDEX_FILE, GIT_WORK_TREE or GIT_OBJECT_DIRECTORY say', async () => {
    // A decoy repository that has none of the commits: a hook reading there would refuse both.
    const decoy = tempDir()
    await gitOk(decoy, ['init', '-q'])
    const env = {
      GIT_DIR: path.join(decoy, '.git'),
      GIT_INDEX_FILE: path.join(decoy, '.git', 'index'),
      GIT_WORK_TREE: decoy,
      GIT_OBJECT_DIRECTORY: path.join(decoy, '.git', 'objects'),
    }
    const hook = path.join(repo, 'hooks', HOOK_NAME)
    const good = await commitObject(repo, { 'providers.yaml': GOOD })
    const bad = await commitObject(repo, { 'providers.yaml': UNDECLARED })
    const line = (oid: string) => `${ZERO} ${oid} refs/heads/config/decoyed\n`
    const accepted = await run(hook, decoy, ['prepared'], { env, input: line(good) })
    expect(accepted).toMatchObject({ code: 0, stderr: '' })
    const refused = await run(hook, decoy, ['prepared'], { env, input: line(bad) })
    expect(refused).toMatchObject({
      code: 1,
      stderr: `${refusing('refs/heads/config/decoyed')}${UNDECLARED_SAYS}\n`,
    })
  })
})
