/**
 * The one place holdfast runs git (simple-git): rare commands and maintenance, never on a request's
 * path. Invariant: git gets the allowlisted environment of proxy/spawn (PATH, HOME, locale, TMPDIR,
 * TZ…), so no GIT_DIR, GIT_INDEX_FILE etc. from a hook redirects it, and simple-git's guard (it
 * refuses EDITOR, PAGER, PREFIX, GIT_* in an explicit env) has nothing to refuse.
 */
import { gitEnv } from '../../spawn'
import { resetPackCache } from './repo'

/** Run `git <args>` in the bare repository `gitdir` (its cwd); resolves with stdout. */
export async function runGit(gitdir: string, args: string[]): Promise<string> {
  // Loaded on the first git command: a server runs one only when a workspace's packs are merged.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { simpleGit } = require('simple-git') as typeof import('simple-git')
  return simpleGit({ baseDir: gitdir }).env(gitEnv()).raw(args)
}

/**
 * Merge the small packs step commits leave (one per batch) into a geometric progression (`git
 * repack -d --geometric=2`: only the small packs are rewritten, deltas found among them), then drop
 * the open handle's pack cache. Never on a request's path; the commit worker runs it when a
 * workspace's commits go quiet. Commits write no loose objects, so there is nothing to prune.
 */
export async function maintain(gitdir: string): Promise<void> {
  try {
    await runGit(gitdir, ['repack', '-d', '-q', '--geometric=2'])
  } finally {
    resetPackCache(gitdir)
  }
}
