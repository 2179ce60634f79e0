/**
 * Small helpers for the store tests: the real `git` binary run with no GIT_* variable of ours and
 * no user or system config (so a developer's settings never change an answer), temp directories,
 * the packs of a repository, and a fresh repository with one config commit.
 */
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { initRepo } from '../../../proxy/store/git'
import { openRepo, type Repo } from '../../../proxy/store/git/repo'

function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GIT_')) env[k] = v
  return {
    ...env,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_AUTHOR_NAME: 't',
    GIT_AUTHOR_EMAIL: 't@t',
    GIT_COMMITTER_NAME: 't',
    GIT_COMMITTER_EMAIL: 't@t',
  }
}

/** `git <args>` in `cwd`; stdout as text; throws (with git's stderr) on a non-zero exit. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    env: cleanEnv(),
    encoding: 'utf8',
    stdio: ['pipe', 'pipe', 'pipe'],
  })
}

/** `git <args>` with `input` on stdin, stdout as bytes. */
export function gitBytes(cwd: string, args: string[], input?: Buffer | string): Buffer {
  return execFileSync('git', args, { cwd, env: cleanEnv(), input, stdio: ['pipe', 'pipe', 'pipe'] })
}

export function tempDir(prefix = 'holdfast-store-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix))
}

/** The `.pack` files of a repository, sorted. */
export function packFiles(gitdir: string): string[] {
  const dir = path.join(gitdir, 'objects', 'pack')
  return fs.existsSync(dir)
    ? fs
        .readdirSync(dir)
        .filter((f) => f.endsWith('.pack'))
        .sort()
    : []
}

/** Every file under `dir` whose name contains `tmp` (a temp file a writer left behind). */
export function tempLeftovers(dir: string): string[] {
  return (fs.readdirSync(dir, { recursive: true }) as string[]).filter((f) =>
    path.basename(f).includes('tmp'),
  )
}

/** An empty bare repository (`git init --bare`) in a new temp dir. */
export function bareRepo(prefix: string): { dir: string; gitdir: string } {
  const dir = tempDir(prefix)
  const gitdir = path.join(dir, 'repo.git')
  git(dir, 'init', '-q', '--bare', gitdir)
  return { dir, gitdir }
}

/** A bare repository in a new temp dir whose `config/default` holds one commit (an empty providers.yaml). */
export async function configRepo(
  prefix: string,
): Promise<{ dir: string; gitdir: string; repo: Repo; root: string }> {
  const dir = tempDir(prefix)
  const gitdir = path.join(dir, 'repo.git')
  const root = await initRepo(gitdir, {
    files: { 'providers.yaml': 'roles: {}\n' },
    message: 'root',
    branch: 'config/default',
  })
  return { dir, gitdir, repo: openRepo(gitdir), root }
}
