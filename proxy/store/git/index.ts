/**
 * The git store: a bare repository per workspace, each step one commit on `refs/heads/agents/<agent>`.
 * Objects are written one way only — hashed and packed by git-pack (no worktree, no spawn, no loose
 * objects); isomorphic-git only reads (git-read.ts) and edits the repository's config. Invariant: a
 * commit's tree is its parent's tree plus the given files (only trees on changed paths are
 * rewritten; no files = parent's tree) and refs move only by casRef. Data: `<home>/workspaces/<ws>/repo.git`.
 */
import { promises as fsp } from 'node:fs'
import * as path from 'node:path'
import * as git from 'isomorphic-git'
import { commitTree, getTree, splitPath, type Author } from './read'
import { COMMIT_AUTHOR } from '../../core/layout'
import { commitBody, gitObject, type GitObject } from './objects'
import { treeBody } from './tree'
import { writePack } from './pack'
import { openRepo, writeRepoFile, type Repo, type TreeEntry } from './repo'
import { assertRefName, casRef, readHeadTarget, readRef, RefConflict } from './refs'

// The face of the git store: code outside store/git imports it from here only (.dependency-cruiser.cjs).
export { dropAllPackBytes, dropPackBytes, Lru, openRepo, type Repo, type TreeEntry } from './repo'
export {
  casRef,
  clearStaleLocks,
  listRefs,
  parsePackedRefs,
  readHeadTarget,
  readRef,
  RefConflict,
  RefLocked,
  type CasOptions,
} from './refs'
export {
  commitTree,
  getTree,
  isAncestor,
  listDir,
  mergeBase,
  readCommitInfo,
  readFileAt,
  resolveRevision,
  type Author,
  type CommitInfo,
  type DirEntry,
} from './read'
export { commitBody, edited, gitObject, type GitObject, type Signature } from './objects'
export { GitTree, treeBody, type TreeItem } from './tree'
export { writePack } from './pack'
export { chainOf, extendChain, retired } from './chain'
export { maintain, type Maintained } from './merge'
export { type Notch, resolveNotch, stepCommit } from './notch'
export {
  checkPacks,
  checkRefs,
  checkTips,
  removeOrphans,
  type MovedPack,
  type MovedRef,
  type Rewound,
} from './check'
export { HEAL_REFLOG_PREFIX, highestInReflog } from './reflog'
export { runGit } from './run'

export type FileContent = Buffer | Uint8Array | string

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

/** The tree `base` + `changes`: its objects (blobs, subtrees, itself) pushed to `objects`; returns its oid. */
async function buildTree(
  repo: Repo,
  base: string | undefined,
  changes: Changes,
  at: string,
  objects: GitObject[],
): Promise<string> {
  const entries = new Map<string, TreeEntry>()
  for (const e of base === undefined ? [] : await getTree(repo, base)) entries.set(e.path, e)
  const clash = (name: string, want: string): Error =>
    new Error(`git path ${JSON.stringify(at + name)} exists as a ${entries.get(name)?.type}, not a ${want}`)
  for (const [name, blob] of changes.files) {
    const old = entries.get(name)
    if (old !== undefined && old.type !== 'blob') throw clash(name, 'blob')
    const o = gitObject('blob', Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength))
    objects.push(o)
    entries.set(name, { mode: old?.mode ?? '100644', path: name, oid: o.oid, type: 'blob' })
  }
  for (const [name, sub] of changes.dirs) {
    const old = entries.get(name)
    if (old !== undefined && old.type !== 'tree') throw clash(name, 'tree')
    const oid = await buildTree(repo, old?.oid, sub, `${at}${name}/`, objects)
    entries.set(name, { mode: '040000', path: name, oid, type: 'tree' })
  }
  const list = [...entries.values()]
  const tree = gitObject('tree', treeBody(list))
  objects.push(tree)
  repo.trees.set(tree.oid, list)
  return tree.oid
}

/**
 * Write a commit whose tree is `parent`'s tree with `files` added or replaced at their
 * `/`-separated paths (no parent: a root commit holding only `files`), as one pack. Moves no ref.
 */
export async function commitFiles(
  repo: Repo,
  opts: { parent: string | undefined; files: Record<string, FileContent>; message: string; author?: Author },
): Promise<string> {
  const objects: GitObject[] = []
  const base = opts.parent === undefined ? undefined : await commitTree(repo, opts.parent)
  const tree = await buildTree(repo, base, changeSet(opts.files), '', objects)
  const who = {
    name: opts.author?.name ?? COMMIT_AUTHOR.name,
    email: opts.author?.email ?? COMMIT_AUTHOR.email,
    timestamp: Math.floor(opts.author?.timestamp ?? Date.now() / 1000),
  }
  const commit = gitObject(
    'commit',
    commitBody(tree, opts.parent === undefined ? [] : [opts.parent], who, opts.message),
  )
  objects.push(commit)
  writePack(repo.gitdir, objects)
  repo.commitTrees.set(commit.oid, tree)
  return commit.oid
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
 * `branch` holding `files` (dated `timestamp`, seconds, when given: the same root everywhere).
 * Idempotent and race-safe: an existing branch is kept; returns its tip.
 */
export async function initRepo(
  gitdir: string,
  opts: { files: Record<string, FileContent>; message: string; branch: string; timestamp?: number },
): Promise<string> {
  const ref = `refs/heads/${opts.branch}`
  assertRefName(ref)
  const repo = openRepo(gitdir)
  for (const dir of ['objects/info', 'objects/pack', 'refs/heads', 'refs/tags', 'hooks', 'info']) {
    await fsp.mkdir(path.join(repo.gitdir, dir), { recursive: true })
  }
  const config = path.join(repo.gitdir, 'config')
  // Absent, or left empty by a power cut: git needs it to know the repository is bare.
  if (!(await exists(config)) || (await fsp.stat(config)).size === 0) {
    await writeRepoFile(config, '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n')
  }
  let tip = await readRef(repo, ref)
  if (tip === undefined) {
    const author = opts.timestamp === undefined ? undefined : { ...COMMIT_AUTHOR, timestamp: opts.timestamp }
    const root = await commitFiles(repo, {
      parent: undefined,
      files: opts.files,
      message: opts.message,
      author,
    })
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
