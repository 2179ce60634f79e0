/**
 * The node side of the `reference-transaction` hook (install.ts writes the sh side). `prepared`:
 * an update of `refs/heads/config/*` whose new `providers.yaml` fails `parseProviders` against
 * holdfast.yaml's rows is refused (exit 1: git aborts, the ref does not move). `committed`: the
 * running proxy (serve.json) gets `POST /_holdfast/events/refs`, best effort. Invariant: the
 * repository is read at its absolute path through isomorphic-git, and git's repository-locating
 * variables (GIT_DIR, GIT_INDEX_FILE, GIT_WORK_TREE, GIT_OBJECT_DIRECTORY… — `git rev-parse
 * --local-env-vars`) are stripped from this process first, so nothing it runs lands in another repository.
 */
import { askServe } from '../proxy/admin/ask'
import fs from 'node:fs'
import { loadConfig, type HoldfastConfig } from '../proxy/store/config'
import { CONFIG_PREFIX } from '../proxy/store/config/lineage'
import { openRepo, readFileAt, readRef } from '../proxy/store/git'
import { homePaths } from '../proxy/store/home'
import { parseProviders, PROVIDERS_FILE } from '../proxy/store/config/providers'
import { stripGitEnv } from '../proxy/process/spawn'

const EVENT_TIMEOUT_MS = 500

export interface RefUpdate {
  ref: string
  old: string
  new: string
}

export interface HookResult {
  code: number
  /** Lines for stderr (what `git commit` prints, and `git push` shows as `remote:`). */
  stderr: string[]
}

const isZero = (oid: string): boolean => /^0+$/.test(oid)

/** `<old> <new> <ref>` lines as git writes them to the hook's stdin; other lines are skipped. */
function parseUpdates(stdin: string): RefUpdate[] {
  const out: RefUpdate[] = []
  for (const line of stdin.split('\n')) {
    const [old, next, ref] = line.trim().split(/\s+/)
    if (old && next && ref) out.push({ ref, old, new: next })
  }
  return out
}

/** The ref's value as readers see it now (loose, then packed-refs), or undefined. */
async function currentValue(gitdir: string, ref: string): Promise<string | undefined> {
  try {
    return await readRef(openRepo(gitdir), ref)
  } catch {
    return undefined
  }
}

/**
 * The updates that change what a reader of the ref sees. git 2.39's `pack-refs` (so `git gc`)
 * replays refs through this hook without moving them: `0 → tip` into packed-refs, then `tip → 0`
 * for each loose file. Without this filter a config tip that no longer validates (a row removed
 * from holdfast.yaml) would make every `git gc` fail. In `committed`, a replayed `0 → tip` looks
 * like a real creation and passes: what it feeds (proxy events, attempts) tolerates repeats.
 */
async function realMoves(
  gitdir: string,
  updates: RefUpdate[],
  state: 'prepared' | 'committed',
): Promise<RefUpdate[]> {
  const out: RefUpdate[] = []
  for (const u of updates) {
    const now = await currentValue(gitdir, u.ref)
    // prepared: a ref that already shows the new value is not being moved; committed: one that
    // does not show it was not moved (its loose file went, packed-refs still has it).
    const moved = state === 'prepared' ? now !== u.new : isZero(u.new) ? now === undefined : now === u.new
    if (moved) out.push(u)
  }
  return out
}

/** The refusal sentence for one config update, or undefined when its providers.yaml is valid. */
async function checkOne(
  gitdir: string,
  rows: HoldfastConfig['providers'],
  u: RefUpdate,
): Promise<string | undefined> {
  let bytes: Buffer | undefined
  try {
    bytes = await readFileAt(openRepo(gitdir), u.new, PROVIDERS_FILE)
  } catch (err) {
    return `${PROVIDERS_FILE}: cannot be read at ${u.new.slice(0, 8)}: ${(err as Error).message}`
  }
  if (bytes === undefined)
    return `${PROVIDERS_FILE}: no such file at ${u.new.slice(0, 8)} (a config lineage must hold it)`
  const parsed = parseProviders(bytes.toString('utf8'), PROVIDERS_FILE, rows)
  return parsed.ok ? undefined : parsed.error
}

/** `prepared`: one `refusing <ref>: <sentence>` line per invalid config update (deletions pass). */
async function checkConfigUpdates(home: string, ws: string, updates: RefUpdate[]): Promise<string[]> {
  const gitdir = homePaths.repo(home, ws)
  const config = updates.filter((u) => u.ref.startsWith(CONFIG_PREFIX) && !isZero(u.new))
  const wanted = config.length ? await realMoves(gitdir, config, 'prepared') : []
  if (wanted.length === 0) return []
  let rows: HoldfastConfig['providers']
  try {
    rows = loadConfig(home).providers
  } catch (err) {
    return wanted.map(
      (u) => `refusing ${u.ref}: cannot check it against holdfast.yaml: ${(err as Error).message}`,
    )
  }
  const refusals: string[] = []
  for (const u of wanted) {
    const problem = await checkOne(gitdir, rows, u)
    if (problem !== undefined) refusals.push(`refusing ${u.ref}: ${problem}`)
  }
  return refusals
}

/** `committed`: tell the running proxy which config refs moved. Best effort: never throws, never waits long. */
async function notifyServer(home: string, ws: string, updates: RefUpdate[]): Promise<boolean> {
  try {
    const config = updates.filter((u) => u.ref.startsWith(CONFIG_PREFIX))
    const refs = config.length ? await realMoves(homePaths.repo(home, ws), config, 'committed') : []
    if (refs.length === 0) return false
    const answered = await askServe(home, '/_holdfast/events/refs', {
      body: { workspace: ws, refs },
      timeoutMs: EVENT_TIMEOUT_MS,
    })
    return answered !== undefined
  } catch {
    return false
  }
}

/** Append one line to `HOLDFAST_HOOK_TRACE` when set (diagnostics: proves when node ran). */
function trace(state: string, updates: RefUpdate[]): void {
  const file = process.env.HOLDFAST_HOOK_TRACE
  if (!file) return
  try {
    fs.appendFileSync(file, `${state} ${updates.map((u) => u.ref).join(' ')}\n`)
  } catch {
    // diagnostics only
  }
}

/**
 * `committed`: a new commit on `attempts/*` asking for a cohort fires it once, in a detached child
 * (proxy/attempts/trailers). Never fails the hook: git has already moved the ref.
 */
async function fireAttempts(home: string, ws: string, updates: RefUpdate[]): Promise<void> {
  const attempts = updates.filter((u) => u.ref.startsWith('refs/heads/attempts/') && !isZero(u.new))
  if (attempts.length === 0) return
  try {
    const moved = await realMoves(homePaths.repo(home, ws), attempts, 'committed')
    const { fireFromRefs } = await import('../proxy/attempts/trailers')
    await fireFromRefs(home, ws, moved)
  } catch (err) {
    process.stderr.write(`holdfast: attempts not fired: ${(err as Error).message}\n`)
  }
}

/** Run the hook for one state. `aborted` (and unknown states) do nothing. */
export async function runReferenceTransaction(
  state: string,
  opts: { home: string; ws: string; stdin: string },
): Promise<HookResult> {
  stripGitEnv()
  const updates = parseUpdates(opts.stdin)
  trace(state, updates)
  if (state === 'prepared') {
    const refusals = await checkConfigUpdates(opts.home, opts.ws, updates)
    return { code: refusals.length ? 1 : 0, stderr: refusals.map((r) => `holdfast: ${r}`) }
  }
  if (state === 'committed') {
    await notifyServer(opts.home, opts.ws, updates)
    await fireAttempts(opts.home, opts.ws, updates)
  }
  return { code: 0, stderr: [] }
}
