/**
 * The git store: a bare repository per workspace, each step one commit on `refs/heads/agents/<agent>`,
 * written as objects with isomorphic-git (no worktree, no spawn). Invariant: a commit's tree is its
 * parent's tree plus the given files (only trees on changed paths are rewritten; no files = parent's
 * tree) and refs move only by casRef. Data: `<home>/workspaces/<ws>/repo.git`. Reads: git-read.ts.
 */
import { promises as fsp } from 'node:fs'
import * as path from 'node:path'
import * as git from 'isomorphic-git'
import { commitTree, getTree, splitPath, type Author } from './git-read'
import { openRepo, writeRepoFile, type Repo, type TreeEntry } from './git-repo'
import { assertRefName, casRef, readHeadTarget, readRef, RefConflict } from './git-refs'

export { openRepo, type Repo } from './git-repo'
export {
  casRef,
  clearStaleLocks,
  listRefs,
  readHeadTarget,
  readRef,
  RefConflict,
  RefLocked,
  type CasOptions,
} from './git-refs'
export {
  isAncestor,
  listDir,
  mergeBase,
  readCommitInfo,
  readFileAt,
  resolveRevision,
  type Author,
  type CommitInfo,
  type DirEntry,
} from './git-read'
export { runGit, maintain } from './git-run'

export type FileContent = Buffer | Uint8Array | string

const DEFAULT_AUTHOR = { name: 'holdfast', email: 'holdfast@localhost' }

interface Changes {
  files: Map<string, Uint8Array>
  dirs: Map<string, Changes>
}

function changeSet(files: Record<string, FileContent>): Changes {
  const root: Changes = { files: new Map(), dirs: new Map() }
  for (const [p, content] of Object.entries(files)) {
    const parts = splitPath(p)
    let node = root
    for (const [i, name] of parts.entries()) {
      const last = i === parts.length - 1
      if (last ? node.dirs.has(name) : node.files.has(name)) {
        throw new Error(`git path ${JSON.stringify(p)} is both a file and a directory in one commit`)
      }
      if (last) node.files.set(name, typeof content === 'string' ? Buffer.from(content) : content)
      else {
        let next = node.dirs.get(name)
        if (next === undefined) node.dirs.set(name, (next = { files: new Map(), dirs: new Map() }))
        node = next
      }
    }
  }
  return root
}

/** Writes the tree `base` + `changes` (and the blobs and subtrees it needs); returns its oid. */
async function writeTreeWith(
  repo: Repo,
  base: string | undefined,
  changes: Changes,
  at: string,
): Promise<string> {
  const entries = new Map<string, TreeEntry>()
  for (const e of base === undefined ? [] : await getTree(repo, base)) entries.set(e.path, e)
  const clash = (name: string, want: string): Error =>
    new Error(`git path ${JSON.stringify(at + name)} exists as a ${entries.get(name)?.type}, not a ${want}`)
  const blobs = [...changes.files].map(async ([name, blob]) => {
    const old = entries.get(name)
    if (old !== undefined && old.type !== 'blob') throw clash(name, 'blob')
    const oid = await git.writeBlob({ fs: repo.fs, gitdir: repo.gitdir, blob })
    return { mode: old?.mode ?? '100644', path: name, oid, type: 'blob' } as const
  })
  const trees = [...changes.dirs].map(async ([name, sub]) => {
    const old = entries.get(name)
    if (old !== undefined && old.type !== 'tree') throw clash(name, 'tree')
    const oid = await writeTreeWith(repo, old?.oid, sub, `${at}${name}/`)
    return { mode: '040000', path: name, oid, type: 'tree' } as const
  })
  for (const e of await Promise.all([...blobs, ...trees])) entries.set(e.path, e)
  const list = [...entries.values()]
  // isomorphic-git normalises (mutates) the entries it is given: hand it copies.
  const oid = await git.writeTree({ fs: repo.fs, gitdir: repo.gitdir, tree: list.map((e) => ({ ...e })) })
  repo.trees.set(oid, list)
  return oid
}

/**
 * Write a commit whose tree is `parent`'s tree with `files` added or replaced at their
 * `/`-separated paths (no parent: a root commit holding only `files`). Moves no ref.
 */
export async function commitFiles(
  repo: Repo,
  opts: { parent: string | undefined; files: Record<string, FileContent>; message: string; author?: Author },
): Promise<string> {
  const changes = changeSet(opts.files)
  const base = opts.parent === undefined ? undefined : await commitTree(repo, opts.parent)
  const tree = await writeTreeWith(repo, base, changes, '')
  const who = {
    name: opts.author?.name ?? DEFAULT_AUTHOR.name,
    email: opts.author?.email ?? DEFAULT_AUTHOR.email,
    timestamp: Math.floor(opts.author?.timestamp ?? Date.now() / 1000),
    timezoneOffset: 0,
  }
  const message = opts.message.endsWith('\n') ? opts.message : `${opts.message}\n`
  const commit = {
    message,
    tree,
    parent: opts.parent === undefined ? [] : [opts.parent],
    author: who,
    committer: who,
  }
  const oid = await git.writeCommit({ fs: repo.fs, gitdir: repo.gitdir, commit })
  repo.commitTrees.set(oid, tree)
  return oid
}

/** Set `key` (e.g. `core.hooksPath`) in the repository's own config when it differs; true when written. */
export async function ensureRepoConfig(repo: Repo, key: string, value: string): Promise<boolean> {
  const current: unknown = await git.getConfig({ fs: repo.fs, gitdir: repo.gitdir, path: key })
  if (current === value) return false
  await git.setConfig({ fs: repo.fs, gitdir: repo.gitdir, path: key, value })
  return true
}

/**
 * Create the bare repository at `gitdir` (HEAD → `refs/heads/<branch>`) with a root commit on
 * `branch` holding `files`. Idempotent and race-safe: an existing branch is kept; returns its tip.
 */
export async function initRepo(
  gitdir: string,
  opts: { files: Record<string, FileContent>; message: string; branch: string },
): Promise<string> {
  const ref = `refs/heads/${opts.branch}`
  assertRefName(ref)
  const repo = openRepo(gitdir)
  for (const dir of ['objects/info', 'objects/pack', 'refs/heads', 'refs/tags', 'hooks', 'info']) {
    await fsp.mkdir(path.join(repo.gitdir, dir), { recursive: true })
  }
  const config = path.join(repo.gitdir, 'config')
  if (!(await exists(config))) {
    await writeRepoFile(config, '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n')
  }
  let tip = await readRef(repo, ref)
  if (tip === undefined) {
    const root = await commitFiles(repo, { parent: undefined, files: opts.files, message: opts.message })
    try {
      await casRef(repo, ref, root, null)
      tip = root
    } catch (err) {
      if (!(err instanceof RefConflict) || err.actual === null) throw err
      tip = err.actual
    }
  }
  // HEAD last: it is what makes git recognise the directory as a repository.
  if ((await readHeadTarget(repo)) === undefined)
    await writeRepoFile(path.join(repo.gitdir, 'HEAD'), `ref: ${ref}\n`)
  return tip
}

async function exists(file: string): Promise<boolean> {
  return fsp.stat(file).then(
    () => true,
    () => false,
  )
}
