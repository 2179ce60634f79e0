/**
 * The one place holdfast spawns git (simple-git): rare commands and maintenance, never on a request's
 * path. Invariant: the child gets an allowlisted environment (PATH, HOME, locale, TMPDIR, TZ…), so
 * no GIT_DIR, GIT_INDEX_FILE, GIT_WORK_TREE, GIT_OBJECT_DIRECTORY etc. from a hook redirects it, and
 * simple-git's guard (it refuses EDITOR, PAGER, PREFIX, GIT_* in an explicit env) has nothing to refuse.
 */
import { simpleGit } from 'simple-git'
import { resetPackCache } from './git-repo'

const KEEP = new Set([
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

/** Run `git <args>` in the bare repository `gitdir` (its cwd); resolves with stdout. */
export async function runGit(gitdir: string, args: string[]): Promise<string> {
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && (KEEP.has(key.toUpperCase()) || key.startsWith('LC_'))) env[key] = value
  }
  return simpleGit({ baseDir: gitdir }).env(env).raw(args)
}

/**
 * Pack loose objects and refs (`git gc --quiet`: repack, pack-refs, prune of unreachable objects
 * older than two weeks), then drop the open handle's pack cache. Schedule it off the request path.
 */
export async function maintain(gitdir: string): Promise<void> {
  try {
    await runGit(gitdir, ['gc', '--quiet'])
  } finally {
    resetPackCache(gitdir)
  }
}
