/**
 * git the program, for the remote: push, fetch, ls-remote, update-ref, merge-base. Each runs in
 * the workspace's bare repository with the environment proxy/process/spawn allows a remote command (the
 * user's credentials reach git through its own helpers and the SSH agent; no prompt can block),
 * in a session of its own, and is stopped (its whole process group) past its time limit.
 * Invariant: never on a request's path; the remote is read from the repository's own config
 * (`git config --local`), so a remote named in a global config is never used.
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

/**
 * Run `git <args>` in `gitdir`; resolves with its exit and output (never rejects for a non-zero
 * exit). `remote`: the environment for talking to a remote (credentials, proxies, no prompts).
 * Past `timeoutMs` (with `idle`, `timeoutMs` without output: give git `--progress`), or when
 * `signal` aborts, git and its helpers are killed (`timedOut`).
 */
export function runGitIn(
  gitdir: string,
  args: readonly string[],
  opts: { timeoutMs?: number; idle?: boolean; remote?: boolean; signal?: AbortSignal } = {},
): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    const child = spawnGit(args, {
      cwd: gitdir,
      env: opts.remote ? gitRemoteEnv() : gitEnv(),
      detached: true,
    })
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
