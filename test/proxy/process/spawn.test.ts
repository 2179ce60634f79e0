/**
 * proxy/process/spawn.ts, what a child process inherits: this process's environment without git's
 * repository-locating variables (GIT_DIR, GIT_INDEX_FILE, GIT_CONFIG_KEY_<n>, …), with `drop`
 * removed and `add` added; git itself gets only an allowlist (PATH, HOME, locale, …). Checked on
 * environment objects and on real children: a node child's environment, and a git child started
 * from a process whose GIT_DIR points at another repository.
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {
  childEnv,
  gitEnv,
  gitRemoteEnv,
  spawnChild,
  spawnGit,
  stripGitEnv,
} from '../../../proxy/process/spawn'

/** What a hook's environment holds: git's locating variables, and variables that must survive. */
const HOOK_ENV: Record<string, string> = {
  GIT_DIR: '/elsewhere/.git',
  GIT_INDEX_FILE: '/elsewhere/.git/index.lock',
  GIT_WORK_TREE: '/elsewhere',
  GIT_OBJECT_DIRECTORY: '/elsewhere/.git/objects',
  GIT_QUARANTINE_PATH: '/elsewhere/.git/objects/incoming-1',
  GIT_CONFIG_COUNT: '1',
  GIT_CONFIG_KEY_0: 'core.hooksPath',
  GIT_CONFIG_VALUE_0: '/evil',
  GIT_AUTHOR_NAME: 'Ada',
  GIT_SSH_COMMAND: 'ssh -i key',
  HOLDFAST_TOKEN_PROBE: 'kept',
}

let saved: NodeJS.ProcessEnv
beforeEach(() => {
  saved = { ...process.env }
})
afterEach(() => {
  for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k]
  Object.assign(process.env, saved)
})

const withHookEnv = () => Object.assign(process.env, HOOK_ENV)
/** The GIT_* variables of HOOK_ENV that `env` still holds (the machine may have others of its own). */
const gitKeys = (env: Record<string, string | undefined>) =>
  Object.keys(env)
    .filter((k) => k.startsWith('GIT_') && (k in HOOK_ENV || k === 'GIT_CONFIG_KEY_X'))
    .sort()

describe('stripGitEnv', () => {
  it("removes git's locating variables and numbered config pairs in place, and keeps git's other variables", () => {
    const env: NodeJS.ProcessEnv = { ...HOOK_ENV, GIT_CONFIG_KEY_X: 'not numbered', PATH: '/bin' }
    stripGitEnv(env)
    expect(gitKeys(env)).toEqual(['GIT_AUTHOR_NAME', 'GIT_CONFIG_KEY_X', 'GIT_SSH_COMMAND'])
    expect([env.PATH, env.HOLDFAST_TOKEN_PROBE]).toEqual(['/bin', 'kept'])
  })

  // Regression: GIT_INTERNAL_SUPER_PREFIX (listed by git 2.39.5) was not stripped.
  it("strips every variable the installed git's `rev-parse --local-env-vars` lists", () => {
    const listed = spawnSync('git', ['rev-parse', '--local-env-vars'], { encoding: 'utf8' })
      .stdout.split('\n')
      .filter(Boolean)
    expect(listed).toContain('GIT_DIR')
    const env: NodeJS.ProcessEnv = Object.fromEntries(listed.map((k) => [k, 'x']))
    stripGitEnv(env)
    expect(Object.keys(env)).toEqual([])
  })
})

describe('childEnv', () => {
  it('copies this process’s environment without the locating variables, `drop` removed, `add` added, leaving process.env alone', () => {
    withHookEnv()
    const env = childEnv({ ADDED: 'yes', GIT_AUTHOR_NAME: 'Bea' }, ['HOLDFAST_TOKEN_PROBE'])
    expect(gitKeys(env)).toEqual(['GIT_AUTHOR_NAME', 'GIT_SSH_COMMAND'])
    expect([env.ADDED, env.GIT_AUTHOR_NAME, env.HOLDFAST_TOKEN_PROBE, env.PATH]).toEqual([
      'yes',
      'Bea',
      undefined,
      process.env.PATH,
    ])
    expect(process.env.GIT_DIR).toBe('/elsewhere/.git') // the caller's environment is untouched
  })
})

describe('gitEnv', () => {
  it('keeps only the allowlist (PATH, HOME, locale, TMPDIR, TZ, …, any LC_*) and nothing else', () => {
    withHookEnv()
    Object.assign(process.env, { LC_ALL: 'C', TZ: 'UTC', EDITOR: 'vi', GIT_TRACE: '1' })
    const env = gitEnv()
    expect(
      Object.keys(env).every((k) =>
        /^(PATH|HOME|USER|LOGNAME|LANG|LANGUAGE|TMPDIR|TZ|XDG_CONFIG_HOME|SYSTEMROOT|COMSPEC|LC_.*)$/i.test(
          k,
        ),
      ),
    ).toBe(true)
    expect([env.PATH, env.LC_ALL, env.TZ, env.EDITOR, env.GIT_TRACE, env.GIT_DIR]).toEqual([
      process.env.PATH,
      'C',
      'UTC',
      undefined,
      undefined,
      undefined,
    ])
  })
})

describe('gitRemoteEnv', () => {
  it("adds the credentials' and network's variables to gitEnv, never the locating ones, and forbids prompts", () => {
    withHookEnv()
    Object.assign(process.env, {
      SSH_AUTH_SOCK: '/run/agent.sock',
      HTTPS_PROXY: 'http://proxy:3128',
      GIT_ASKPASS: '/bin/askpass',
      GIT_TRACE: '1',
      EDITOR: 'vi',
    })
    const env = gitRemoteEnv()
    expect([env.SSH_AUTH_SOCK, env.HTTPS_PROXY, env.GIT_ASKPASS, env.GIT_SSH_COMMAND]).toEqual([
      '/run/agent.sock',
      'http://proxy:3128',
      '/bin/askpass',
      'ssh -i key',
    ])
    expect([env.GIT_DIR, env.GIT_INDEX_FILE, env.GIT_CONFIG_KEY_0, env.GIT_TRACE, env.EDITOR]).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ])
    expect([env.GIT_TERMINAL_PROMPT, env.GCM_INTERACTIVE]).toEqual(['0', 'never'])
  })
})

describe('spawnGit', () => {
  it('runs git with exactly the environment given, in a session of its own when detached', async () => {
    withHookEnv()
    const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-spawn-')))
    try {
      spawnSync('git', ['init', '-q', '--bare', path.join(tmp, 'r.git')])
      const child = spawnGit(['rev-parse', '--absolute-git-dir'], {
        cwd: path.join(tmp, 'r.git'),
        env: gitEnv(),
        detached: true,
      })
      const out = await new Promise<string>((resolve, reject) => {
        let text = ''
        child.stdout?.on('data', (d: Buffer) => (text += d.toString()))
        child.once('error', reject)
        child.once('close', () => resolve(text))
      })
      expect(out.trim()).toBe(path.join(tmp, 'r.git'))
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true })
    }
  })
})

describe('spawnChild: a real child process', () => {
  const output = (child: ReturnType<typeof spawnChild>): Promise<string> =>
    new Promise((resolve, reject) => {
      let out = ''
      child.stdout?.on('data', (d: Buffer) => (out += d.toString()))
      child.on('error', reject)
      child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`exit ${code}`))))
    })

  it('starts a child whose environment lacks GIT_DIR, GIT_INDEX_FILE and the config pairs, with opts.env added', async () => {
    withHookEnv()
    const child = spawnChild(process.execPath, ['-e', 'process.stdout.write(JSON.stringify(process.env))'], {
      env: { FROM_OPTS: '1' },
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    const env = JSON.parse(await output(child)) as Record<string, string>
    expect(gitKeys(env)).toEqual(['GIT_AUTHOR_NAME', 'GIT_SSH_COMMAND'])
    expect([env.FROM_OPTS, env.HOLDFAST_TOKEN_PROBE]).toEqual(['1', 'kept'])
  })

  it('lets a git child find the repository of its cwd, not the one a hook’s GIT_DIR names', async () => {
    const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-spawn-')))
    try {
      for (const r of ['mine', 'hooks']) spawnSync('git', ['init', '-q', path.join(tmp, r)])
      Object.assign(process.env, {
        GIT_DIR: path.join(tmp, 'hooks', '.git'),
        GIT_WORK_TREE: path.join(tmp, 'hooks'),
      })
      const child = spawnChild('git', ['rev-parse', '--absolute-git-dir'], {
        cwd: path.join(tmp, 'mine'),
        stdio: ['ignore', 'pipe', 'inherit'],
      })
      expect((await output(child)).trim()).toBe(path.join(tmp, 'mine', '.git'))
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true })
    }
  })
})
