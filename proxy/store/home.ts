/**
 * Where holdfast keeps its state: the home (`--home`, then `$HOLDFAST_HOME`, then `~/.holdfast`)
 * and every path under it (DESIGN §3), and whether other local users can reach the records in it.
 * Invariant: paths are built only from names that passed core/naming; nothing here creates files
 * or changes a mode.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { assertName } from '../core/naming'

export function resolveHome(flag?: string): string {
  const chosen = flag ?? process.env.HOLDFAST_HOME ?? path.join(os.homedir(), '.holdfast')
  return path.resolve(chosen)
}

export const homePaths = {
  config: (home: string) => path.join(home, 'holdfast.yaml'),
  serveJson: (home: string) => path.join(home, 'serve.json'),
  serveLock: (home: string) => path.join(home, 'serve.lock'),
  /** The home's token (0600), generated at the first start: store/token. */
  token: (home: string) => path.join(home, 'token'),
  opsLog: (home: string) => path.join(home, 'ops.jsonl'),
  workspaces: (home: string) => path.join(home, 'workspaces'),
  workspace: (home: string, ws: string) => path.join(home, 'workspaces', assertName('workspace', ws)),
  repo: (home: string, ws: string) => path.join(homePaths.workspace(home, ws), 'repo.git'),
  journal: (home: string, ws: string) => path.join(homePaths.workspace(home, ws), 'journal'),
  agentJournal: (home: string, ws: string, agent: string) =>
    path.join(homePaths.journal(home, ws), assertName('agent', agent)),
  /** Journal entries recovery could not commit, moved aside: `<home>/quarantine/<ws>/<agent>/<NNN>/`. */
  quarantine: (home: string) => path.join(home, 'quarantine'),
}

export const DEFAULT_LINEAGE = 'default'

/** A directory's group/others bits as words: who, and what they can do (undefined: closed to both). */
function openTo(mode: number): { who: string; what: string; enter: boolean } | undefined {
  if ((mode & 0o055) === 0) return undefined
  const who = [mode & 0o050 ? 'group' : '', mode & 0o005 ? 'others' : ''].filter(Boolean).join(' and ')
  const what = [mode & 0o044 ? 'list' : '', mode & 0o011 ? 'enter' : ''].filter(Boolean).join(' and ')
  return { who, what, enter: (mode & 0o011) !== 0 }
}

/**
 * The home (or, when `workspaces/` is a link to a directory elsewhere, that directory) open to
 * group or others, as the sentence serve warns with: the records (every request and answer) are
 * files other local users can read once they can enter the directory. `workspaces/` under a
 * closed home is closed too, whatever its own mode; holdfast makes its directories with the
 * umask's mode, so only the gate is checked. Nothing on a system without POSIX modes (Windows).
 */
export function exposedHome(home: string): string[] {
  if (process.platform === 'win32') return []
  const say = (dir: string, mode: number): string[] => {
    const open = openTo(mode)
    if (!open) return []
    const shown = mode.toString(8).padStart(4, '0')
    const reach = open.enter ? ', and so read every record under it' : ''
    return [
      `${dir} is open to ${open.who} (mode ${shown}: they can ${open.what} it${reach}); run: chmod 700 ${dir}`,
    ]
  }
  const mode = (file: string, stat: (f: string) => fs.Stats): number | undefined => {
    try {
      return stat(file).mode & 0o777
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw err
    }
  }
  const own = mode(home, fs.statSync)
  if (own === undefined) return []
  const gate = say(home, own)
  if (gate.length > 0) return gate
  const workspaces = homePaths.workspaces(home)
  if (!fs.lstatSync(workspaces, { throwIfNoEntry: false })?.isSymbolicLink()) return []
  const there = mode(workspaces, fs.statSync)
  return there === undefined ? [] : say(workspaces, there)
}
