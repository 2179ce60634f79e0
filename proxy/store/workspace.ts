/**
 * A workspace on disk: `<home>/workspaces/<ws>/` with its bare repository `repo.git` (HEAD →
 * `config/default`, created on first use with a starter `providers.yaml`) and its journal's
 * directory. Invariant: a workspace is only where a record lives and how to open it: the commit
 * is the record's (record/commit), the git hook the caller's to install (the `prepare` edge:
 * store/hook-install); a workspace is never removed under its handle.
 */
import fs from 'node:fs'
import fsp from 'node:fs/promises'
import path from 'node:path'
import { agentRef, AGENTS_PREFIX, agentStepsPath } from '../core/layout'
import { assertName, parseStep } from '../core/naming'
import { clearStaleLocks, initRepo, listDir, openRepo, readRef, type Repo } from './git'
import { DEFAULT_LINEAGE, homePaths } from './home'
import { fsyncDir, fsyncTree } from './atomic'

export const STARTER_PROVIDERS_YAML = `# Roles for this workspace: a request whose model (or x-holdfast-role header) names a role
# is routed to that role's provider row (declared in holdfast.yaml) with that role's model.
# See docs/roles.md.
roles: {}
`

export interface WorkspaceOptions {
  /** Commits flushed to the disk before they count (holdfast.yaml `journal.fsync`). */
  durable?: boolean
  /**
   * Run by each `ensure()` once the repository exists: serve and the CLI pass the git hook's
   * installer (store/hook-install `hookPreparer`), which reports its own failures. A throw fails
   * `ensure()` (the next call tries again).
   */
  prepare?: (ws: Workspace) => Promise<void>
}

export class Workspace {
  readonly repo: Repo
  readonly journalDir: string
  private ready: Promise<void> | undefined

  constructor(
    readonly home: string,
    readonly name: string,
    readonly options: WorkspaceOptions = {},
  ) {
    this.repo = openRepo(homePaths.repo(home, name))
    this.journalDir = homePaths.journal(home, name)
  }

  private seen = false

  /** Whether the repository exists (remembered once it does: a workspace is never removed under us). */
  exists(): boolean {
    this.seen ||= fs.existsSync(this.repo.gitdir)
    return this.seen
  }

  /**
   * Create the repository (and its root commit on config/default) when it does not exist. A
   * failure (a full or read-only disk) is not remembered: the next call tries again.
   */
  ensure(): Promise<void> {
    this.ready ??= (async () => {
      const made = !fs.existsSync(this.repo.gitdir)
      await fsp.mkdir(this.journalDir, { recursive: true })
      await initRepo(this.repo.gitdir, {
        branch: `config/${DEFAULT_LINEAGE}`,
        files: { 'providers.yaml': STARTER_PROVIDERS_YAML },
        message: 'config: starter providers.yaml',
        // One fixed date: every workspace on every machine starts from the same commit, so machines
        // sharing a remote share config history and the team's lineage fast-forwards theirs.
        timestamp: 0,
      })
      // The caller's own setup (the git hook, installed or refreshed).
      await this.options.prepare?.(this)
      // A workspace made in this session is on the disk before its first step counts.
      if (made && this.options.durable) {
        fsyncTree(path.dirname(this.repo.gitdir))
        fsyncDir(homePaths.workspaces(this.home))
      }
    })().catch((err: unknown) => {
      this.ready = undefined
      throw err
    })
    return this.ready
  }

  agentJournal(agent: string): string {
    return homePaths.agentJournal(this.home, this.name, agent)
  }

  /** Where readers find the agents' branches (a teammate's fetched agents are elsewhere: proxy/remote/teammates). */
  get agentsPrefix(): string {
    return AGENTS_PREFIX
  }

  /** The branch readers read an agent's committed steps from. */
  branch(agent: string): string {
    return this.agentsPrefix + assertName('agent', agent)
  }

  /** The highest step number committed on the agent's branch (0 when none or no branch). */
  async committedSteps(agent: string): Promise<number> {
    const tip = await readRef(this.repo, agentRef(agent))
    if (!tip) return 0
    const entries = await listDir(this.repo, tip, agentStepsPath(agent))
    let max = 0
    for (const e of entries ?? []) max = Math.max(max, parseStep(e.name) ?? 0)
    return max
  }

  /** Remove lock files a crashed writer left on agent refs (only under the home lock). */
  async clearStaleLocks(): Promise<string[]> {
    return clearStaleLocks(this.repo.gitdir, 'agents')
  }
}

/** The workspace names that exist under `<home>/workspaces`. */
export async function listWorkspaces(home: string): Promise<string[]> {
  try {
    const entries = await fsp.readdir(homePaths.workspaces(home), { withFileTypes: true })
    return entries.filter((e) => e.isDirectory()).map((e) => e.name)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw err
  }
}
