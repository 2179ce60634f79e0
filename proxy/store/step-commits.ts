/**
 * Committing journal steps: each step one commit on `refs/heads/agents/<agent>` holding
 * `steps/<agent>/<NNN>/…`, a batch of steps written as one pack and each agent's ref moved once,
 * by compare-and-swap. Invariant: an agent's steps are committed in the order given (the caller
 * gives them in step order), each on top of the previous; only the trees on the changed path are
 * rewritten. An empty batch writes nothing.
 */
import fs from 'node:fs'
import path from 'node:path'
import { formatStep } from '../core/naming'
import { commitTree, getTree } from './git-read'
import { commitBody, gitObject, type GitObject, type Signature, treeBody, writePack } from './git-pack'
import type { Repo, TreeEntry } from './git-repo'
import { casRef, readRef, RefConflict } from './git-refs'
import { agentRef, configRef, DEFAULT_LINEAGE } from './home'
import { META_FILE, REQUEST_FILE, RESPONSE_FILES } from '../record/journal'

export interface StepToCommit {
  agent: string
  n: number
  model: string | null
}

const STEP_FILES = new Set<string>([REQUEST_FILE, META_FILE, ...RESPONSE_FILES])
const AUTHOR = { name: 'holdfast', email: 'holdfast@localhost' }

/** `items` with `name` set to a tree `oid` (added or replaced). */
function withTree(items: readonly TreeEntry[], name: string, oid: string): TreeEntry[] {
  return [...items.filter((i) => i.path !== name), { mode: '040000', path: name, oid, type: 'tree' }]
}

/** The entries of the subtree `name` (none when absent); a file in its place is refused. */
async function subtree(repo: Repo, items: readonly TreeEntry[], name: string): Promise<TreeEntry[]> {
  const found = items.find((i) => i.path === name)
  if (!found) return []
  if (found.type !== 'tree')
    throw new Error(`git path "${name}" is a file where holdfast expects a directory`)
  return [...(await getTree(repo, found.oid))]
}

/** Build the commits of one agent's steps on `parent`; returns the objects and the commit ids. */
async function buildAgent(
  repo: Repo,
  journalDir: string,
  agent: string,
  steps: readonly StepToCommit[],
  parent: string | undefined,
  objects: GitObject[],
): Promise<string[]> {
  // Entries inherited from the parent keep their modes (an executable, a symlink stays one).
  let root: TreeEntry[] = parent ? [...(await getTree(repo, await commitTree(repo, parent)))] : []
  let stepsDir = await subtree(repo, root, 'steps')
  let agentDir = await subtree(repo, stepsDir, agent)
  const commits: string[] = []
  const put = (o: GitObject, entries?: TreeEntry[]): string => {
    objects.push(o)
    if (entries) repo.trees.set(o.oid, entries)
    return o.oid
  }
  for (const s of steps) {
    const dir = path.join(journalDir, agent, formatStep(s.n))
    const files: TreeEntry[] = []
    for (const name of fs.readdirSync(dir).sort()) {
      if (!STEP_FILES.has(name)) continue
      const oid = put(gitObject('blob', fs.readFileSync(path.join(dir, name))))
      files.push({ mode: '100644', path: name, oid, type: 'blob' })
    }
    if (!files.some((f) => f.path === REQUEST_FILE))
      throw new Error(`step ${formatStep(s.n)} of ${agent} has no request.json`)
    const stepTree = put(gitObject('tree', treeBody(files)), files)
    agentDir = withTree(agentDir, formatStep(s.n), stepTree)
    const agentTree = put(gitObject('tree', treeBody(agentDir)), agentDir)
    stepsDir = withTree(stepsDir, agent, agentTree)
    const stepsTree = put(gitObject('tree', treeBody(stepsDir)), stepsDir)
    root = withTree(root, 'steps', stepsTree)
    const rootTree = put(gitObject('tree', treeBody(root)), root)
    const who: Signature = { ...AUTHOR, timestamp: Math.floor(Date.now() / 1000) }
    const message = `step ${formatStep(s.n)}: ${s.model ?? 'unknown model'} [${agent}]\n`
    const commit = put(gitObject('commit', commitBody(rootTree, parent ? [parent] : [], who, message)))
    repo.commitTrees.set(commit, rootTree)
    commits.push(commit)
    parent = commit
  }
  return commits
}

export interface Committed {
  /** Commit id of every committed step, keyed `<agent>/<n>`. */
  oids: Map<string, string>
  /** Agents whose branch could not be moved (locked, or moved by someone else 4 times): none of their steps is committed. */
  failed: Map<string, Error>
}

/**
 * Commit `steps` (any agents of one workspace; each agent's in step order) as one pack. A branch
 * that does not exist is created at `config/default`'s tip; a branch someone else moved meanwhile
 * is built on again. Throws only when nothing could be written (then nothing moved).
 */
export async function commitSteps(
  repo: Repo,
  journalDir: string,
  steps: readonly StepToCommit[],
): Promise<Committed> {
  const byAgent = new Map<string, StepToCommit[]>()
  for (const s of steps) byAgent.set(s.agent, [...(byAgent.get(s.agent) ?? []), s])
  const result: Committed = { oids: new Map(), failed: new Map() }
  let pending = [...byAgent.keys()]
  for (let attempt = 0; pending.length > 0; attempt++) {
    const objects: GitObject[] = []
    const moves: { agent: string; tip: string | null; commits: string[] }[] = []
    for (const agent of pending) {
      const tip = (await readRef(repo, agentRef(agent))) ?? null
      const parent = tip ?? (await readRef(repo, configRef(DEFAULT_LINEAGE)))
      const commits = await buildAgent(repo, journalDir, agent, byAgent.get(agent) ?? [], parent, objects)
      moves.push({ agent, tip, commits })
    }
    writePack(repo.gitdir, objects)
    const retry: string[] = []
    for (const m of moves) {
      try {
        await casRef(repo, agentRef(m.agent), m.commits[m.commits.length - 1] as string, m.tip)
        const list = byAgent.get(m.agent) ?? []
        list.forEach((s, i) => result.oids.set(`${s.agent}/${s.n}`, m.commits[i] as string))
      } catch (err) {
        // Someone else moved the branch between our read and our swap: build on their tip.
        if (err instanceof RefConflict && attempt < 3) retry.push(m.agent)
        else result.failed.set(m.agent, err instanceof Error ? err : new Error(String(err)))
      }
    }
    pending = retry
  }
  return result
}
