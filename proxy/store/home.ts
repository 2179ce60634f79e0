/**
 * Where holdfast keeps its state: the home (`--home`, then `$HOLDFAST_HOME`, then `~/.holdfast`)
 * and every path under it (DESIGN §3). Invariant: paths are built only from names that passed
 * core/naming; nothing here creates files.
 */
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
