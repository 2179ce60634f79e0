/**
 * git the program, for the remote: push, fetch, ls-remote, update-ref, merge-base. Each runs in
 * the workspace's bare repository with the environment proxy/process/spawn allows a remote command (the
 * user's credentials reach git through its own helpers and the SSH agent; no prompt can block),
 * in a session of its own, and is stopped (its whole process group) past its time limit.
 * Invariant: never on a request's path; the remote is read from the repository's own config
 * (`git config --local`), so a remote named in a global config is never used. Invariant: a push
 * or fetch carries its own limits (`remoteGitArgs`), so one that a killed serve left behind still
 * ends once its transfer stalls: curl gives up below http.lowSpeedLimit for http.lowSpeedTime,
 * and ssh (unless the user chose their own ssh command) after its keep-alives go unanswered.
 *
 * Why git stays detached (a session of its own) rather than dying with serve's process group:
 * with no controlling terminal no ssh or askpass program can prompt on serve's terminal, a Ctrl-C
 * there does not cut the last push `close` waits for, and the time limit can stop git's helpers
 * with it. A kill -9 of serve alone leaves any child running, detached or not; so the bound lives
 * in git's own arguments instead of a pid file reaped at the next start (the home's commands run
 * git without the home lock, and a recorded pid can be given to another process by then).
 */
import fs from 'node:fs'
import path from 'node:path'
import { gitEnv, gitRemoteEnv, spawnGit } from '../process/spawn'
import { gitReason, REMOTE } from './refs'

export interface GitResult {
  code: number | null
  stdout: string
  stderr: string
  /** Stopped: past its time limit, or aborted. */
  timedOut: boolean
}

/** Bytes per second below which curl counts a transfer as stalled (`http.lowSpeedLimit`). */
export const LOW_SPEED_LIMIT = 1000
/** Seconds below LOW_SPEED_LIMIT after which curl gives up (`http.lowSpeedTime`). */
export const LOW_SPEED_TIME_S = 60
/**
 * The ssh a remote push or fetch runs when the user named none: no prompt (BatchMode), a
 * connection that stops answering given up after two unanswered keep-alives 15 s apart, a host
 * that never answers given up after 30 s.
 */
export const SSH_COMMAND =
  'ssh -o BatchMode=yes -o ServerAliveInterval=15 -o ServerAliveCountMax=2 -o ConnectTimeout=30'

/**
 * `args` for a git that talks to a remote, with limits that hold without serve: curl's low-speed
 * bound, and SSH_COMMAND unless the user chose their ssh (`sshChosen`: core.sshCommand is set, or
 * `env` has GIT_SSH_COMMAND or GIT_SSH, which git prefers to what it would otherwise run).
 */
export function remoteGitArgs(
  args: readonly string[],
  env: Readonly<Record<string, string>>,
  sshChosen: boolean,
): string[] {
  const limits = [
    '-c',
    `http.lowSpeedLimit=${LOW_SPEED_LIMIT}`,
    '-c',
    `http.lowSpeedTime=${LOW_SPEED_TIME_S}`,
  ]
  const userSsh = sshChosen || env.GIT_SSH_COMMAND !== undefined || env.GIT_SSH !== undefined
  if (!userSsh) limits.push('-c', `core.sshCommand=${SSH_COMMAND}`)
  return [...limits, ...args]
}

/**
 * Run `git <args>` in `gitdir`; resolves with its exit and output (never rejects for a non-zero
 * exit). `remote`: the environment for talking to a remote (credentials, proxies, no prompts) and
 * the limits of `remoteGitArgs` (core.sshCommand read first, one `git config`).
 * Past `timeoutMs` (with `idle`, `timeoutMs` without output: give git `--progress`), or when
 * `signal` aborts, git and its helpers are killed (`timedOut`).
 */
export async function runGitIn(
  gitdir: string,
  args: readonly string[],
  opts: { timeoutMs?: number; idle?: boolean; remote?: boolean; signal?: AbortSignal } = {},
): Promise<GitResult> {
  if (!opts.remote) return run(gitdir, args, gitEnv(), opts)
  const env = gitRemoteEnv()
  const ssh = await run(gitdir, ['config', '--get', 'core.sshCommand'], env, { timeoutMs: 10_000 })
  return run(gitdir, remoteGitArgs(args, env, ssh.code === 0), env, opts)
}

function run(
  gitdir: string,
  args: readonly string[],
  env: Record<string, string>,
  opts: { timeoutMs?: number; idle?: boolean; signal?: AbortSignal },
): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    const child = spawnGit(args, { cwd: gitdir, env, detached: true })
    let stdout = ''
    let stderr = ''
    let timedOut = false
    let timer: NodeJS.Timeout | undefined
    const arm = (): void => {
      if (opts.timeoutMs === undefined) return
      if (timer) clearTimeout(timer)
      timer = setTimeout(stop, opts.timeoutMs)
    }
    child.stdout?.setEncoding('utf8').on('data', (d: string) => (stdout += d))
    child.stderr?.setEncoding('utf8').on('data', (d: string) => {
      stderr += d
      if (opts.idle) arm() // progress: a large push is slow, not stuck
    })
    const stop = (): void => {
      timedOut = true
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL') // git and its ssh/curl helpers
      } catch {
        child.kill('SIGKILL') // the group is gone already; the child itself, if not
      }
    }
    arm()
    if (opts.signal?.aborted) stop()
    opts.signal?.addEventListener('abort', stop, { once: true })
    const done = (): void => {
      if (timer) clearTimeout(timer)
      opts.signal?.removeEventListener('abort', stop)
    }
    child.once('error', (err) => {
      done()
      reject(err)
    })
    child.once('close', (code) => {
      done()
      resolve({ code, stdout, stderr, timedOut })
    })
  })
}

/** One sentence for a failed git command: the time limit, or git's own first line. */
export function failure(r: GitResult, limitMs?: number): string {
  if (r.timedOut) {
    const ms = limitMs ?? 0
    return `git went ${ms >= 1000 ? `${Math.round(ms / 1000)} s` : `${ms} ms`} without finishing or progress and was stopped`
  }
  return gitReason(r.stderr)
}

/**
 * The URL of the remote named `holdfast` in a repository's own config, or undefined. Read with
 * git (one process) only when `config` changed since the last read (its size and mtime), so a
 * caller may ask before every push.
 */
export class RemoteUrl {
  private seen: string | undefined
  private url: string | undefined

  constructor(private readonly gitdir: string) {}

  private stamp(): string | undefined {
    const st = fs.statSync(path.join(this.gitdir, 'config'), { throwIfNoEntry: false })
    return st && `${st.size}:${st.mtimeMs}:${st.ino}`
  }

  /** Whether the repository's config changed since the last `get` (a stat; no git). */
  changed(): boolean {
    return this.stamp() !== this.seen
  }

  async get(): Promise<string | undefined> {
    const stamp = this.stamp()
    if (stamp === undefined) return undefined // no repository (yet)
    if (stamp === this.seen) return this.url
    const r = await runGitIn(this.gitdir, ['config', '--local', '--get', `remote.${REMOTE}.url`])
    // exit 1: the key is not set; anything else is a config git cannot read
    if (r.code !== 0 && r.code !== 1) throw new Error(`reading the remote of ${this.gitdir}: ${failure(r)}`)
    this.url = r.code === 0 ? r.stdout.trim() || undefined : undefined
    this.seen = stamp
    return this.url
  }
}
