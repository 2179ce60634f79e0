/**
 * A workspace on disk: `<home>/workspaces/<ws>/` with its bare repository `repo.git` (HEAD →
 * `config/default`, created on first use with a starter `providers.yaml`) and its journal.
 * Invariant: a step is committed on `refs/heads/agents/<agent>` only by compare-and-swap, after
 * every earlier step of that agent; a branch is created at `config/default`'s tip.
 */
import fs from 'node:fs'
import fsp from 'node:fs/promises'
import { assertName, parseStep } from '../core/naming'
import { type HookInstall, installHooks } from './hook-install'
import { openRepo, type Repo } from './git/repo'
import { clearStaleLocks, readRef } from './git/refs'
import { initRepo, listDir } from './git'
import { type Committed, commitSteps, type StepToCommit } from '../record/commit/step-commits'
import { agentRef, DEFAULT_LINEAGE, homePaths } from './home'
import { fsyncDir, fsyncTree } from './atomic'
import path from 'node:path'
import { agentStepsPath } from '../core/layout'

export const STARTER_PROVIDERS_YAML = `# Roles for this workspace: a request whose model (or x-holdfast-role header) names a role
# is routed to that role's provider row (declared in holdfast.yaml) with that role's model.
# See docs/roles.md.
roles: {}
`

export class Workspace {
  readonly repo: Repo
  readonly journalDir: string
  private ready: Promise<void> | undefined
  /** What `ensure()` did with the repository's git hook (proxy/store/hook-install.ts). */
  hookInstall: HookInstall | undefined

  constructor(
    readonly home: string,
    readonly name: string,
    /** Commits flushed to the disk before they count (holdfast.yaml `journal.fsync`). */
    readonly options: { durable?: boolean } = {},
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
      // Install or refresh the git hook; a failure never fails the caller (serve logs it).
      this.hookInstall = await installHooks(this.home, this.name)
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
    return 'refs/heads/agents/'
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

  /** Commit one step on the agent's branch; returns the commit id. */
  async commitStep(step: StepToCommit): Promise<string> {
    const { oids, failed } = await commitSteps(this.repo, [step], this.options)
    const err = failed.get(step.agent)
    if (err) throw err
    return oids.get(`${step.agent}/${step.n}`) as string
  }

  /** Commit several steps (each agent's in step order) as one pack. */
  commitSteps(steps: readonly StepToCommit[]): Promise<Committed> {
    return commitSteps(this.repo, steps, this.options)
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
