/**
 * git's tree, one model for every tree holdfast writes (the anchor: isomorphic-git's
 * `src/models/GitTree.js`): its entries in git's order, each `<mode> <name>\0<20-byte id>`, a
 * directory ordered as if its name ended in `/`, modes written as git writes them (`40000`, no
 * leading zero). A `GitTree` keeps each entry's bytes, so a tree kept between commits (an agent's
 * steps directory, one entry per step) is edited in place — an entry set is a binary search and,
 * at the end, a push — and says how its body changed (what a delta on the old body needs). Reading
 * trees is isomorphic-git's (store/git/read). Pure. Format:
 * https://git-scm.com/docs/gitformat-object (trees), git's `base_name_compare`.
 */
import type { Edit } from './objects'

/** A tree entry as isomorphic-git reads it (`040000` for a tree); any mode is kept as it was. */
export interface TreeItem {
  mode: string
  path: string
  oid: string
  type: string
}

/** An entry's sort key: its name, a directory's with a `/` after it. */
function keyOf(e: TreeItem): string {
  return e.type === 'tree' ? `${e.path}/` : e.path
}

const isSurrogate = (unit: number): boolean => unit >= 0xd800 && unit <= 0xdfff

/**
 * Two keys in git's order, the bytes of their UTF-8: that is code point order, and JavaScript
 * compares UTF-16 units, which differs only where one is past the BMP (a surrogate sorts above
 * every other unit). Strings, not buffers: keys kept with a cached tree pin no pool slab.
 */
export function compareKeys(a: string, b: string): number {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i)
    const y = b.charCodeAt(i)
    if (x === y) continue
    const sx = isSurrogate(x)
    if (sx !== isSurrogate(y)) return sx ? 1 : -1
    return x - y
  }
  return a.length - b.length
}

/**
 * One entry's bytes. `own`: in a buffer of its own — a line kept as long as its tree is cached must
 * not pin a shared pool slab (thousands of them did, in a long run).
 */
function entryLine(e: TreeItem, own: boolean): Buffer {
  const head = `${e.mode.replace(/^0+/, '')} ${e.path}\0`
  const out = own
    ? Buffer.allocUnsafeSlow(Buffer.byteLength(head) + 20)
    : Buffer.allocUnsafe(Buffer.byteLength(head) + 20)
  const at = out.write(head, 0, 'utf8')
  out.write(e.oid, at, 'hex')
  return out
}

/** `entries` in git's tree order, with their keys. */
function sorted(entries: readonly TreeItem[]): { key: string; e: TreeItem }[] {
  return entries.map((e) => ({ key: keyOf(e), e })).sort((a, b) => compareKeys(a.key, b.key))
}

/** A tree object's body, made once (a tree not kept: a step's files, the root). */
export function treeBody(entries: readonly TreeItem[]): Buffer {
  return Buffer.concat(sorted(entries).map((s) => entryLine(s.e, false)))
}

/** A tree kept serialized: its entries' keys and bytes in git's order, and the body's length. */
export class GitTree {
  private constructor(
    private readonly keys: string[],
    private readonly lines: Buffer[],
    private bytes: number,
  ) {}

  static of(entries: readonly TreeItem[]): GitTree {
    const s = sorted(entries)
    const lines = s.map((x) => entryLine(x.e, true))
    return new GitTree(
      s.map((x) => x.key),
      lines,
      lines.reduce((n, l) => n + l.length, 0),
    )
  }

  /** A copy to edit (what is cached is never edited). */
  copy(): GitTree {
    return new GitTree(this.keys.slice(), this.lines.slice(), this.bytes)
  }

  get size(): number {
    return this.lines.length
  }

  /** Set `entry` (added, or replacing the entry of its name and kind), in place; returns how the body changed. */
  set(entry: TreeItem): Omit<Edit, 'base'> {
    const key = keyOf(entry)
    const { keys, lines } = this
    let lo = keys.length
    // A new step sorts last, but for the first of each longer width (1000 goes before 101).
    if (lo > 0 && compareKeys(keys[lo - 1] as string, key) >= 0) {
      let hi = lo
      lo = 0
      while (lo < hi) {
        const mid = (lo + hi) >> 1
        if (compareKeys(keys[mid] as string, key) < 0) lo = mid + 1
        else hi = mid
      }
    }
    const l = entryLine(entry, true)
    let prefix = this.bytes
    for (let i = lines.length - 1; i >= lo; i--) prefix -= (lines[i] as Buffer).length
    const replaced = keys[lo] === key
    const skip = replaced ? (lines[lo] as Buffer).length : 0
    if (replaced) lines[lo] = l
    else {
      keys.splice(lo, 0, key)
      lines.splice(lo, 0, l)
    }
    this.bytes += l.length - skip
    return { prefix, skip, insert: l }
  }

  body(): Buffer {
    return Buffer.concat(this.lines, this.bytes)
  }
}
