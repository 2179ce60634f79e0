/**
 * Reading the git store: files, directories and commits at a commit, ancestry, revisions.
 * Invariant: objects are immutable, so parsed trees and commit → tree are cached by oid; a read
 * that fails for another reason than a missing object is tried again with a fresh pack cache.
 * Data: the bare repository of a Repo handle; absent paths and refs read as undefined.
 */
import * as git from 'isomorphic-git'
import { isRefComponent } from '../../core/naming'
import { forgetUnreadable, type Repo, type TreeEntry } from './repo'
import { readRef } from './refs'

export interface Author {
  name: string
  email: string
  /** Seconds since the epoch; default now. */
  timestamp?: number
}
export interface CommitInfo {
  oid: string
  tree: string
  parents: string[]
  /** As git stores it (ends with a newline). */
  message: string
  author: Required<Author>
}
export interface DirEntry {
  name: string
  type: 'blob' | 'tree'
  oid: string
}

/** Split a `/`-separated tree path; throws on empty, `.`, `..`, `.git` or NUL segments. */
export function splitPath(p: string): string[] {
  const parts = p.split('/')
  for (const s of parts) {
    if (s === '' || s === '.' || s === '..' || s.toLowerCase() === '.git' || s.includes('\0')) {
      throw new Error(`git path ${JSON.stringify(p)} is not usable (empty, ".", "..", ".git" or NUL segment)`)
    }
  }
  return parts
}

function isNotFound(err: unknown): boolean {
  return (err as { code?: unknown }).code === 'NotFoundError'
}

const ANSWERS = new Set(['NotFoundError', 'AmbiguousError', 'ObjectTypeError'])

/** Tries of a read that fails for another reason than an answer (a missing object, an ambiguous id). */
const PACK_TRIES = 4

/**
 * A read tried again when it fails for another reason than an answer, or answers "not found" while
 * a pack it listed went: an agent's chain pack is replaced at each of its commits (and `git gc`
 * may run), so a pack listed a moment ago can be gone when its index or bytes are read. Each try
 * lists the packs again (a pack gone is forgotten then: store/git/repo) and reads only the indexes
 * it has not read; the last try starts from an empty cache.
 */
async function withPackRetry<T>(repo: Repo, read: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const vanished = repo.vanished
    try {
      return await read()
    } catch (err) {
      // An answer stands, unless a pack went while it was read: what it held is in its successor.
      const answer = ANSWERS.has((err as { code?: string }).code ?? '') && repo.vanished === vanished
      if (answer || attempt >= PACK_TRIES) throw err
      if (attempt === PACK_TRIES - 1) repo.cache = {}
      else await forgetUnreadable(repo)
    }
  }
}

export async function getTree(repo: Repo, oid: string): Promise<readonly TreeEntry[]> {
  let entries = repo.trees.get(oid)
  if (entries === undefined) {
    const { tree } = await withPackRetry(repo, () => git.readTree({ ...io(repo), oid }))
    entries = tree
    repo.trees.set(oid, entries)
  }
  return entries
}

function io(repo: Repo): { fs: Repo['fs']; gitdir: string; cache: object } {
  return { fs: repo.fs, gitdir: repo.gitdir, cache: repo.cache }
}

export async function commitTree(repo: Repo, commitOid: string): Promise<string> {
  let tree = repo.commitTrees.get(commitOid)
  if (tree === undefined) {
    tree = (await readCommitInfo(repo, commitOid)).tree
    repo.commitTrees.set(commitOid, tree)
  }
  return tree
}

/** Parents, tree, message and author of a commit (annotated tags are peeled). */
export async function readCommitInfo(repo: Repo, oid: string): Promise<CommitInfo> {
  const r = await withPackRetry(repo, () => git.readCommit({ ...io(repo), oid }))
  const { name, email, timestamp } = r.commit.author
  return {
    oid: r.oid,
    tree: r.commit.tree,
    parents: r.commit.parent,
    message: r.commit.message,
    author: { name, email, timestamp },
  }
}

/** The entry at `p` in the commit's tree ('' is the root), or undefined. */
async function entryAt(
  repo: Repo,
  commitOid: string,
  p: string,
): Promise<{ type: string; oid: string } | undefined> {
  let entry: { type: string; oid: string } | undefined = {
    type: 'tree',
    oid: await commitTree(repo, commitOid),
  }
  for (const name of p === '' ? [] : splitPath(p)) {
    if (entry?.type !== 'tree') return undefined
    entry = (await getTree(repo, entry.oid)).find((e) => e.path === name)
  }
  return entry
}

/** The bytes of the file at `p` in the commit, or undefined when there is no file there. */
export async function readFileAt(repo: Repo, commitOid: string, p: string): Promise<Buffer | undefined> {
  const entry = await entryAt(repo, commitOid, p)
  if (entry?.type !== 'blob') return undefined
  const { blob } = await withPackRetry(repo, () => git.readBlob({ ...io(repo), oid: entry.oid }))
  return Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength)
}

/** The entries of the directory at `dirPath` ('' is the root), sorted by name, or undefined when none. */
export async function listDir(
  repo: Repo,
  commitOid: string,
  dirPath: string,
): Promise<DirEntry[] | undefined> {
  const entry = await entryAt(repo, commitOid, dirPath)
  if (entry?.type !== 'tree') return undefined
  const out: DirEntry[] = []
  for (const e of await getTree(repo, entry.oid)) {
    if (e.type === 'blob' || e.type === 'tree') out.push({ name: e.path, type: e.type, oid: e.oid })
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}

/** True when `ancestor` is `descendant` or one of its ancestors (git merge-base --is-ancestor). */
export async function isAncestor(repo: Repo, ancestor: string, descendant: string): Promise<boolean> {
  if (ancestor === descendant) return true
  return withPackRetry(repo, () => git.isDescendent({ ...io(repo), oid: descendant, ancestor }))
}

/** A best common ancestor of `a` and `b` (the first if there are several), or undefined. */
export async function mergeBase(repo: Repo, a: string, b: string): Promise<string | undefined> {
  const bases = (await withPackRetry(repo, () =>
    git.findMergeBase({ ...io(repo), oids: [a, b] }),
  )) as string[]
  return bases[0]
}

/**
 * The commit a revision names: a full oid, a unique oid prefix (≥ 4 hex digits), `HEAD`,
 * `refs/…`, or a branch name `x` (= refs/heads/x, which wins over an oid prefix). Undefined
 * when nothing matches; throws on an ambiguous prefix, a malformed name, or a non-commit.
 */
export async function resolveRevision(repo: Repo, rev: string): Promise<string | undefined> {
  let oid: string | undefined
  if (/^[0-9a-f]{40}$/.test(rev)) oid = rev
  else if (rev === 'HEAD' || rev.startsWith('refs/')) oid = await readRef(repo, rev)
  else if (rev.split('/').every(isRefComponent)) oid = await readRef(repo, `refs/heads/${rev}`)
  else if (!/^[0-9a-f]{4,39}$/.test(rev))
    throw new Error(`revision ${JSON.stringify(rev)} is not a ref name or object id`)
  if (oid === undefined && /^[0-9a-f]{4,39}$/.test(rev)) {
    try {
      oid = await withPackRetry(repo, () => git.expandOid({ ...io(repo), oid: rev }))
    } catch (err) {
      if (isNotFound(err)) return undefined
      throw err
    }
  }
  if (oid === undefined) return undefined
  try {
    return (await readCommitInfo(repo, oid)).oid
  } catch (err) {
    if (isNotFound(err)) return undefined
    throw new Error(`revision ${JSON.stringify(rev)} does not name a commit`, { cause: err })
  }
}
