/**
 * The one place holdfast decides what a child process inherits. Every child — git, a dispatcher,
 * a detached serve or cohort, the command `holdfast run` starts, an MCP tool host — gets this
 * process's environment without git's repository-locating variables (GIT_DIR, GIT_INDEX_FILE, …,
 * what `git rev-parse --local-env-vars` lists), so a child started from inside a git hook never
 * reads or writes the hook's repository; git itself gets only an allowlist. Invariant: no module
 * but this one calls `child_process.spawn` or `spawnSync` (simple-git and the MCP SDK spawn their
 * own children, with an environment from here).
 */
import { type ChildProcess, spawn, type SpawnOptions, spawnSync } from 'node:child_process'

/** What git strips before running git in another repository (git 2.39, `rev-parse --local-env-vars`). */
export const GIT_LOCAL_ENV = [
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_CONFIG',
  'GIT_CONFIG_PARAMETERS',
  'GIT_CONFIG_COUNT',
  'GIT_OBJECT_DIRECTORY',
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_IMPLICIT_WORK_TREE',
  'GIT_GRAFT_FILE',
  'GIT_INDEX_FILE',
  'GIT_NO_REPLACE_OBJECTS',
  'GIT_REPLACE_REF_BASE',
  'GIT_PREFIX',
  'GIT_INTERNAL_SUPER_PREFIX',
  'GIT_SHALLOW_FILE',
  'GIT_COMMON_DIR',
  'GIT_QUARANTINE_PATH',
  'GIT_NAMESPACE',
]

const isGitLocal = (key: string): boolean =>
  GIT_LOCAL_ENV.includes(key) || /^GIT_CONFIG_(KEY|VALUE)_\d+$/.test(key)

/** Remove git's repository-locating variables from an environment, in place (this process's by default). */
export function stripGitEnv(env: NodeJS.ProcessEnv = process.env): void {
  for (const key of Object.keys(env)) if (isGitLocal(key)) delete env[key]
}

/** This process's environment without git's repository-locating variables, `drop` removed, `add` added. */
export function childEnv(
  add: Readonly<Record<string, string>> = {},
  drop: readonly string[] = [],
): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !isGitLocal(k) && !drop.includes(k)) env[k] = v
  return { ...env, ...add }
}

/** The variables git itself runs with (PATH, HOME, locale, TMPDIR, TZ…): nothing from a hook redirects it. */
const GIT_KEEP = new Set([
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'LANG',
  'LANGUAGE',
  'TMPDIR',
  'TZ',
  'XDG_CONFIG_HOME',
  'SYSTEMROOT',
  'COMSPEC',
])

export function gitEnv(): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && (GIT_KEEP.has(key.toUpperCase()) || key.startsWith('LC_'))) env[key] = value
  }
  return env
}

/**
 * What git needs, beyond `gitEnv`, to reach a remote with the user's own credentials: the SSH
 * agent, the user's ssh and askpass programs, proxies and CA settings. holdfast stores none of it.
 */
const GIT_REMOTE_KEEP = new Set([
  'SSH_AUTH_SOCK',
  'SSH_AGENT_PID',
  'GIT_SSH',
  'GIT_SSH_COMMAND',
  'GIT_SSH_VARIANT',
  'GIT_ASKPASS',
  'SSH_ASKPASS',
  'GIT_SSL_CAINFO',
  'GIT_SSL_CAPATH',
  'GIT_CONFIG_GLOBAL',
  'GIT_CONFIG_NOSYSTEM',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'ALL_PROXY',
  'NO_PROXY',
])

/**
 * `gitEnv` plus the credentials' and network's variables, for a push or fetch that runs in the
 * background: `GIT_TERMINAL_PROMPT=0` (and Git Credential Manager's `GCM_INTERACTIVE=never`) so a
 * missing credential fails at once instead of waiting on a terminal no one watches.
 */
export function gitRemoteEnv(): Record<string, string> {
  const env = gitEnv()
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && GIT_REMOTE_KEEP.has(key.toUpperCase())) env[key] = value
  }
  return { ...env, GIT_TERMINAL_PROMPT: '0', GCM_INTERACTIVE: 'never' }
}

/**
 * Start git with `args` and exactly `env` (`gitEnv()` or `gitRemoteEnv()`, never this process's
 * whole environment); stdin is closed. `detached` puts it in a session of its own, so it has no
 * controlling terminal (ssh cannot prompt) and the caller can stop its process group.
 */
export function spawnGit(
  args: readonly string[],
  opts: { cwd: string; env: Readonly<Record<string, string>>; detached?: boolean },
): ChildProcess {
  return spawn('git', args, {
    cwd: opts.cwd,
    env: { ...opts.env },
    detached: opts.detached ?? false,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
}

/** Start `command` with `args`; its environment is `childEnv(opts.env)` (opts.env adds to it). */
export function spawnChild(
  command: string,
  args: readonly string[],
  opts: Omit<SpawnOptions, 'env'> & { env?: Readonly<Record<string, string>> } = {},
): ChildProcess {
  return spawn(command, args, { ...opts, env: childEnv(opts.env) })
}

/**
 * When process `pid` started, as `ps -o lstart=` says it (where there is no procfs); undefined when
 * it is gone or ps cannot tell within two seconds.
 */
export function psStartTime(pid: number): string | undefined {
  const r = spawnSync('ps', ['-o', 'lstart=', '-p', String(pid)], {
    encoding: 'utf8',
    timeout: 2000,
    env: childEnv(),
  })
  return r.status === 0 ? r.stdout.trim() || undefined : undefined
}
