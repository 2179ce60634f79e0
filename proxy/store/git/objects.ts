/**
 * Git objects as holdfast makes them: commit bodies (a tree's is store/git/tree's), hashed with
 * SHA-1 as git hashes them, and pieced objects (a tree with one entry spliced in, kept as pieces
 * of its base and the edit). Pure: writing them is pack.ts's. Format:
 * https://git-scm.com/docs/gitformat-object
 */
import { createHash } from 'node:crypto'

export type ObjectType = 'blob' | 'tree' | 'commit'
/**
 * How an object differs from `base`: `base`'s first `prefix` bytes, then `insert`, then `base`'s
 * bytes after `prefix + skip`.
 */
export interface Edit {
  base: GitObject
  prefix: number
  skip: number
  insert: Buffer
}

export interface GitObject {
  type: ObjectType
  body: Buffer
  /** The body's length, when reading `body` would join it (a pieced object's). */
  size?: number
  oid: string
  /** When its base is written earlier in the same pack, the object is written as a delta on it (a tree with one entry added: a few dozen bytes). */
  edit?: Edit
  /** An object this one mostly repeats (an agent's previous request): when it is in the same pack, this one is written as a delta on it if that is clearly smaller. */
  similar?: GitObject
}

/** An object and its id: SHA-1 of `<type> <size>\0<body>`. */
export function gitObject(type: ObjectType, body: Buffer): GitObject {
  const oid = createHash('sha1').update(`${type} ${body.length}\0`).update(body).digest('hex')
  return { type, body, oid }
}

/** An object's body length, without joining a pieced body. */
export const sizeOf = (o: GitObject): number => o.size ?? o.body.length

/**
 * An object whose body is given in pieces (an agent's tree with one entry spliced in): hashed piece
 * by piece, and joined into one buffer only if something reads `body` (the pack writes it whole),
 * so a long agent's batch does not copy its steps tree once per step.
 */
export class PiecedObject implements GitObject {
  readonly oid: string
  readonly size: number
  edit?: Edit
  #body: Buffer | undefined

  constructor(
    readonly type: ObjectType,
    readonly pieces: readonly Buffer[],
  ) {
    this.size = pieces.reduce((n, p) => n + p.length, 0)
    const hash = createHash('sha1').update(`${type} ${this.size}\0`)
    for (const p of pieces) hash.update(p)
    this.oid = hash.digest('hex')
  }

  get body(): Buffer {
    return (this.#body ??= Buffer.concat(this.pieces, this.size))
  }
}

/**
 * `base` with one edit applied, as pieces of it (see PiecedObject), written as a delta on `base`
 * when `base` is earlier in the same pack.
 */
export function edited(base: GitObject, e: Omit<Edit, 'base'>): PiecedObject {
  const pieces = base instanceof PiecedObject ? base.pieces : [base.body]
  const o = new PiecedObject(base.type, splicePieces(pieces, e.prefix, e.skip, e.insert))
  o.edit = { base, ...e }
  return o
}

/** Pieces shorter than this are joined with a short neighbour: an agent's batch appends ~31 bytes a step. */
const JOIN_BELOW = 4096

/**
 * `pieces` (`size` bytes in all) with `skip` bytes at `prefix` replaced by `insert`: the pieces of
 * the edited body, sharing the unchanged ones (nothing large is copied).
 */
export function splicePieces(
  pieces: readonly Buffer[],
  prefix: number,
  skip: number,
  insert: Buffer,
): Buffer[] {
  const out: Buffer[] = []
  let at = 0
  let i = 0
  // The pieces wholly before the edit.
  for (; i < pieces.length && at + (pieces[i] as Buffer).length <= prefix; i++) {
    out.push(pieces[i] as Buffer)
    at += (pieces[i] as Buffer).length
  }
  // The piece the edit starts in: its head, the insert, then what is left after the skipped bytes.
  let drop = prefix - at + skip
  const head = i < pieces.length ? (pieces[i] as Buffer).subarray(0, prefix - at) : undefined
  if (head && head.length > 0) out.push(head)
  if (insert.length > 0) out.push(insert)
  for (; i < pieces.length; i++) {
    const p = pieces[i] as Buffer
    if (drop >= p.length) {
      drop -= p.length
      continue
    }
    out.push(drop > 0 ? p.subarray(drop) : p)
    drop = 0
  }
  // Short neighbours joined: the appended entries of a batch stay one piece.
  const joined: Buffer[] = []
  for (const p of out) {
    const last = joined[joined.length - 1]
    if (last && last.length < JOIN_BELOW && p.length < JOIN_BELOW)
      joined[joined.length - 1] = Buffer.concat([last, p])
    else joined.push(p)
  }
  return joined
}

export interface Signature {
  name: string
  email: string
  /** Seconds since the epoch. */
  timestamp: number
}

export function commitBody(
  tree: string,
  parents: readonly string[],
  who: Signature,
  message: string,
): Buffer {
  const sig = `${who.name} <${who.email}> ${who.timestamp} +0000`
  const lines = [`tree ${tree}`, ...parents.map((p) => `parent ${p}`), `author ${sig}`, `committer ${sig}`]
  return Buffer.from(`${lines.join('\n')}\n\n${message.endsWith('\n') ? message : `${message}\n`}`)
}
