/**
 * The one place holdfast runs git (simple-git): rare commands and maintenance, never on a request's
 * path. Invariant: git gets the allowlisted environment of proxy/process/spawn (PATH, HOME, locale, TMPDIR,
 * TZ…), so no GIT_DIR, GIT_INDEX_FILE etc. from a hook redirects it, and simple-git's guard (it
 * refuses EDITOR, PAGER, PREFIX, GIT_* in an explicit env) has nothing to refuse.
 */
import { gitEnv } from '../../process/spawn'

/** Run `git <args>` in the bare repository `gitdir` (its cwd); resolves with stdout. */
export async function runGit(gitdir: string, args: string[]): Promise<string> {
  // Loaded on the first git command: a server runs one only when a workspace's packs are merged.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { simpleGit } = require('simple-git') as typeof import('simple-git')
  return simpleGit({ baseDir: gitdir }).env(gitEnv()).raw(args)
}
