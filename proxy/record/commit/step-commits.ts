/**
 * Committing steps: each step one commit on `refs/heads/agents/<agent>` holding
 * `steps/<agent>/<NNN>/…`, each agent's ref moved once a batch, by compare-and-swap. An agent
 * whose requests reach CHAIN_FROM bytes writes into its own chain pack (store/git/chain), each
 * request a delta on its previous one; the others' steps share one pack a batch. Invariant: an agent's steps are committed in the order given (the caller
 * gives them in step order), each on top of the previous; only the trees on the changed path are
 * rewritten, and the agent's own `steps/<agent>` tree (one entry per step) is kept serialized per
 * batch tip (store/git/tree's GitTree): a batch edits its own copy in place (a step is a push),
 * never a cached one; within a batch each agent tree after the first is the previous body with one
 * entry spliced in, kept as pieces of it (hashed over the whole tree, written as a delta on it,
 * joined only when the pack writes it whole). An empty batch writes nothing. Why the trees are
 * pieced: docs/performance.md.
 */
import { formatStep } from '../../core/naming'
import {
  agentRef,
  agentStepsPath,
  COMMIT_AUTHOR,
  configRef,
  REQUEST_FILE,
  STEPS_DIR,
  stepSubject,
} from '../../core/layout'
import {
  casRef,
  chainOf,
  commitBody,
  commitTree,
  edited,
  extendChain,
  getTree,
  gitObject,
  type GitObject,
  GitTree,
  Lru,
  readRef,
  RefConflict,
  type Repo,
  type Signature,
  treeBody,
  type TreeEntry,
  writePack,
} from '../../store/git'
import { DEFAULT_LINEAGE } from '../../store/home'
import { findStep, knowStep, stepAt } from './step-numbers'

export interface StepToCommit {
  agent: string
  n: number
  model: string | null
  /** The step's files by name (`request.json`, `meta.json`, `response.*`); request.json is required. */
  files: Readonly<Record<string, Buffer>>
}

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

/** Each repository's serialized `steps/<agent>` trees, by tree oid (a new tip's tree is added as it is made). */
const agentTrees = new WeakMap<Repo, Lru<GitTree>>()

async function agentTree(repo: Repo, oid: string | undefined): Promise<GitTree> {
  let cache = agentTrees.get(repo)
  if (!cache) agentTrees.set(repo, (cache = new Lru<GitTree>(256)))
  if (oid === undefined) return GitTree.of([])
  let t = cache.get(oid)
  if (!t) cache.set(oid, (t = GitTree.of(await getTree(repo, oid))))
  return t
}

/**
 * An agent gets a chain pack of its own once one of its requests is this large (and keeps it):
 * below it a delta saves little, and rewriting a chain per batch for each of many agents sending
 * small requests cost more CPU a step than one shared pack per batch (docs/performance.md, chain packs).
 */
export const CHAIN_FROM = 32 * 1024

/** What an agent's next batch is written as deltas on: its last request and its last steps tree. */
type Bases = Record<'request' | 'tree', GitObject>

/**
 * Build the commits of one agent's steps on `parent`; returns the objects, the commit ids, and the
 * objects the agent's next batch may be deltas on. Each request is a delta on the one before (the
 * previous batch's last, from the agent's chain pack), each steps tree an edit of the one before.
 */
async function buildAgent(
  repo: Repo,
  agent: string,
  steps: readonly StepToCommit[],
  parent: string | undefined,
  bases: Partial<Bases>,
): Promise<{ objects: GitObject[]; commits: string[]; bases: Partial<Bases> }> {
  const objects: GitObject[] = []
  // Entries inherited from the parent keep their modes (an executable, a symlink stays one).
  let root: TreeEntry[] = parent ? [...(await getTree(repo, await commitTree(repo, parent)))] : []
  let stepsDir = await subtree(repo, root, STEPS_DIR)
  const existing = stepsDir.find((e) => e.path === agent)
  if (existing && existing.type !== 'tree')
    throw new Error(`git path "${agentStepsPath(agent)}" is a file where holdfast expects a directory`)
  const agentDir = (await agentTree(repo, existing?.oid)).copy()
  const commits: string[] = []
  const put = (o: GitObject, entries?: TreeEntry[]): string => {
    objects.push(o)
    if (entries) repo.trees.set(o.oid, entries)
    return o.oid
  }
  // The agent's tree of the previous step: the next one is written as a delta on it (one entry
  // added), so a long agent's commit does not write its whole steps directory again. The chain's
  // copy is the branch tip's only when the branch did not move under us.
  let previousDir = bases.tree && bases.tree.oid === existing?.oid ? bases.tree : undefined
  let previousRequest = bases.request
  for (const s of steps) {
    const request = s.files[REQUEST_FILE]
    if (!request) throw new Error(`step ${formatStep(s.n)} of ${agent} has no ${REQUEST_FILE}`)
    const files: TreeEntry[] = Object.entries(s.files).map(([name, bytes]) => {
      const o = gitObject('blob', bytes)
      if (bytes === request) {
        // The previous request plus the new turn: a delta on it holds the new bytes only.
        o.similar = previousRequest
        previousRequest = o
      }
      return { mode: '100644', path: name, oid: put(o), type: 'blob' }
    })
    const stepTree = put(gitObject('tree', treeBody(files)), files)
    const edit = agentDir.set({ mode: '040000', path: formatStep(s.n), oid: stepTree, type: 'tree' })
    // Each tree after the first is the one before with an entry spliced in, kept as pieces
    // (hashed whole, written as a delta, joined only when written whole).
    const agentObj = previousDir ? edited(previousDir, edit) : gitObject('tree', agentDir.body())
    previousDir = agentObj
    put(agentObj)
    stepsDir = withTree(stepsDir, agent, agentObj.oid)
    const stepsTree = put(gitObject('tree', treeBody(stepsDir)), stepsDir)
    root = withTree(root, STEPS_DIR, stepsTree)
    const rootTree = put(gitObject('tree', treeBody(root)), root)
    const who: Signature = { ...COMMIT_AUTHOR, timestamp: Math.floor(Date.now() / 1000) }
    const commit = put(
      gitObject(
        'commit',
        commitBody(rootTree, parent ? [parent] : [], who, stepSubject(agent, s.n, s.model)),
      ),
    )
    repo.commitTrees.set(commit, rootTree)
    knowStep(repo, commit, s.n)
    commits.push(commit)
    parent = commit
  }
  // The next batch starts from the last tree (content-addressed: right whether or not this lands).
  if (previousDir) agentTrees.get(repo)?.set(previousDir.oid, agentDir)
  const next: Partial<Bases> = {}
  if (previousRequest) next.request = previousRequest
  if (previousDir) next.tree = previousDir
  return { objects, commits, bases: next }
}

export interface Committed {
  /** Commit id of every committed step, keyed `<agent>/<n>` (a step that was on its branch already: its commit there). */
  oids: Map<string, string>
  /** Agents whose branch could not be moved (locked, or moved by someone else 4 times): none of their steps is committed. */
  failed: Map<string, Error>
}

/**
 * Commit `steps` (any agents of one workspace; each agent's in step order) as one pack. A branch
 * that does not exist is created at `config/default`'s tip; a branch someone else moved meanwhile
 * is built on again. A step whose number the branch tip has reached is on it already (the same
 * step sent again, after a worker restart): it is not committed twice. Throws only when nothing
 * could be written (then nothing moved).
 */
export async function commitSteps(
  repo: Repo,
  steps: readonly StepToCommit[],
  /** `durable`: packs and refs flushed to the disk (holdfast.yaml `journal.fsync`). */
  options: { durable?: boolean } = {},
): Promise<Committed> {
  const byAgent = new Map<string, StepToCommit[]>()
  for (const s of steps) byAgent.set(s.agent, [...(byAgent.get(s.agent) ?? []), s])
  const result: Committed = { oids: new Map(), failed: new Map() }
  let pending = [...byAgent.keys()]
  for (let attempt = 0; pending.length > 0; attempt++) {
    const retry: string[] = []
    // Agents whose steps go into the batch's shared pack (small requests), moved once it is written.
    const shared: GitObject[] = []
    const moves: { agent: string; tip: string | null; commits: string[]; steps: StepToCommit[] }[] = []
    const move = async (m: (typeof moves)[number]): Promise<void> => {
      try {
        const last = m.steps[m.steps.length - 1] as StepToCommit
        await casRef(repo, agentRef(m.agent), m.commits[m.commits.length - 1] as string, m.tip, {
          durable: options.durable,
          // The trail a start follows back when a power cut took the tip's objects.
          reflog: stepSubject(m.agent, last.n, last.model),
        })
        m.steps.forEach((s, i) => result.oids.set(`${s.agent}/${s.n}`, m.commits[i] as string))
      } catch (err) {
        // Someone else moved the branch between our read and our swap: build on their tip.
        if (err instanceof RefConflict && attempt < 3) retry.push(m.agent)
        else result.failed.set(m.agent, err instanceof Error ? err : new Error(String(err)))
      }
    }
    for (const agent of pending) {
      const tip = (await readRef(repo, agentRef(agent))) ?? null
      const onBranch = tip ? (await stepAt(repo, agent, tip)).n : 0
      const all = byAgent.get(agent) ?? []
      for (const s of all.filter((x) => x.n <= onBranch)) {
        const oid = await findStep(repo, agent, tip as string, s.n)
        if (oid) result.oids.set(`${agent}/${s.n}`, oid)
      }
      const fresh = all.filter((x) => x.n > onBranch)
      if (fresh.length === 0) continue
      const parent = tip ?? (await readRef(repo, configRef(DEFAULT_LINEAGE)))
      const chain = chainOf(repo.gitdir, agent)
      const chained =
        chain !== undefined || fresh.some((s) => (s.files[REQUEST_FILE]?.length ?? 0) >= CHAIN_FROM)
      const built = await buildAgent(repo, agent, fresh, parent, chain?.bases ?? {})
      const m = { agent, tip, commits: built.commits, steps: fresh }
      if (chained) {
        // The agent's chain pack, extended: its objects can be deltas on its earlier ones.
        extendChain(repo.gitdir, agent, built.objects, built.bases, options)
        await move(m)
      } else {
        shared.push(...built.objects)
        moves.push(m)
      }
    }
    writePack(repo.gitdir, shared, options)
    for (const m of moves) await move(m)
    pending = retry
  }
  return result
}

/** Commit one step on its agent's branch; returns the commit id, or throws why its branch could not move. */
export async function commitStep(
  repo: Repo,
  step: StepToCommit,
  options: { durable?: boolean } = {},
): Promise<string> {
  const { oids, failed } = await commitSteps(repo, [step], options)
  const err = failed.get(step.agent)
  if (err) throw err
  return oids.get(`${step.agent}/${step.n}`) as string
}
