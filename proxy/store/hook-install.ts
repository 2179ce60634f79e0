/**
 * The git hook holdfast installs in a workspace: `<home>/workspaces/<ws>/repo.git/hooks/reference-transaction`,
 * a POSIX sh script with node, holdfast's CLI entry, the home and the workspace baked in as absolute
 * paths, and `core.hooksPath` pointing there (a global hooksPath would otherwise disable it).
 * Invariant: the script starts node only for refs under `refs/heads/config/` (and, committed, under
 * `refs/heads/attempts/`); installing rewrites only what changed and never throws (failures are returned).
 */
import fsp from 'node:fs/promises'
import path from 'node:path'
import type { Logger } from '../process/log'
import { writeFileAtomic } from './atomic'
import { ensureRepoConfig, openRepo } from './git'
import { homePaths } from './home'
import { selfArgv } from '../process/package-root'

export const HOOK_NAME = 'reference-transaction'

export type HookInstall =
  { ok: true; file: string; changed: boolean } | { ok: false; file: string; error: string }

/** One sh word: single-quoted, a `'` inside written as `'\''`. */
const sh = (word: string): string => `'${word.replace(/'/g, `'\\''`)}'`

/** The script for one workspace. Only builtins run before the `case` decides a ref matters. */
export function referenceTransactionScript(home: string, ws: string): string {
  const argv = [...selfArgv(), 'hook', HOOK_NAME].map(sh).join(' ')
  return `#!/bin/sh
# holdfast: validates config/* updates of workspace ${JSON.stringify(ws)} and tells a running proxy.
# Written by \`holdfast hooks install\`, at workspace creation and at every \`holdfast serve\` start;
# edits are overwritten. See docs/roles.md (Hooks). Other refs cost one sh and no node.
case "$1" in prepared | committed) ;; *) exit 0 ;; esac
lines=
while read -r old new ref; do
  case "$ref" in
  refs/heads/config/*) # a deletion needs no validation
    if [ "$1" = prepared ]; then case "$new" in *[!0]*) ;; *) continue ;; esac; fi ;;
  refs/heads/attempts/*) [ "$1" = committed ] || continue ;;
  *) continue ;;
  esac
  lines="$lines$old $new $ref
"
done
[ -n "$lines" ] || exit 0
exec ${argv} "$1" --home ${sh(home)} --ws ${sh(ws)} <<HOLDFAST_REFS
$lines
HOLDFAST_REFS
`
}

async function readOrUndefined(file: string): Promise<string | undefined> {
  try {
    return await fsp.readFile(file, 'utf8')
  } catch {
    return undefined
  }
}

/** Install or refresh the hook of one workspace (its repository must exist). Never throws. */
export async function installHooks(home: string, ws: string): Promise<HookInstall> {
  const gitdir = homePaths.repo(path.resolve(home), ws)
  const dir = path.join(gitdir, 'hooks')
  const file = path.join(dir, HOOK_NAME)
  try {
    const text = referenceTransactionScript(path.resolve(home), ws)
    let changed = false
    if ((await readOrUndefined(file)) !== text) {
      await writeFileAtomic(file, text, 0o755) // renamed into place: git never runs half a script
      changed = true
    } else if (((await fsp.stat(file)).mode & 0o111) !== 0o111) {
      await fsp.chmod(file, 0o755)
      changed = true
    }
    if (await ensureRepoConfig(openRepo(gitdir), 'core.hooksPath', dir)) changed = true
    return { ok: true, file, changed }
  } catch (err) {
    return { ok: false, file, error: (err as Error).message }
  }
}

/** Log an install's outcome: a failure is a warning (requests go on without the hook), never an error. */
export function logHookInstall(
  log: Pick<Logger, 'info' | 'warn'>,
  ws: string,
  r: HookInstall | undefined,
): void {
  if (r === undefined) return
  if (!r.ok)
    log.warn(
      { ws, file: r.file, err: r.error },
      'could not install the git hook; config commits made with git are not validated',
    )
  else if (r.changed) log.info({ ws, file: r.file }, 'installed the git hook')
}

/**
 * The Workspace `prepare` edge that installs or refreshes the hook at each `ensure()`, its outcome
 * logged (without `log`, kept quiet: the CLI's own `holdfast hooks` reports it).
 */
export function hookPreparer(
  log?: Pick<Logger, 'info' | 'warn'>,
): (ws: { home: string; name: string }) => Promise<void> {
  return async (ws) => {
    const r = await installHooks(ws.home, ws.name)
    if (log) logHookInstall(log, ws.name, r)
  }
}
