/**
 * Git deltas (https://git-scm.com/docs/pack-format#_deltified_representation): how an object is
 * made from a base by copying ranges of it and inserting new bytes. `deltaOf` finds them for a
 * step's request against the previous one — the same bytes with a breakpoint moved and messages
 * added — in time near the size of what changed: runs of equal bytes are found by comparing
 * whole blocks natively, and the places where the two part and meet again are found with native
 * searches for a short anchor, never by hashing every position. Pure: buffers in, buffers out.
 */

/** A size in a delta's header: 7 bits a byte, least significant first. */
export function deltaSize(n: number): number[] {
  const out: number[] = []
  do {
    let byte = n & 0x7f
    n = Math.floor(n / 128)
    if (n > 0) byte |= 0x80
    out.push(byte)
  } while (n > 0)
  return out
}

/** Delta instructions copying `size` bytes of the base from `offset` (at most 0xffffff a copy). */
export function copyOps(offset: number, size: number): number[] {
  const out: number[] = []
  while (size > 0) {
    const n = Math.min(size, 0xffffff)
    const op = out.length
    out.push(0x80)
    for (let i = 0; i < 4; i++) {
      const b = Math.floor(offset / 2 ** (8 * i)) & 0xff
      if (b !== 0) {
        out[op] = (out[op] as number) | (1 << i)
        out.push(b)
      }
    }
    for (let i = 0; i < 3; i++) {
      const b = (n >> (8 * i)) & 0xff
      if (b !== 0) {
        out[op] = (out[op] as number) | (0x10 << i)
        out.push(b)
      }
    }
    offset += n
    size -= n
  }
  return out
}

/** Insert instructions for `bytes` (at most 127 a piece). */
function insertOps(bytes: Buffer, parts: Buffer[]): void {
  for (let at = 0; at < bytes.length; at += 127) {
    const piece = bytes.subarray(at, at + 127)
    parts.push(Buffer.from([piece.length]), piece)
  }
}

/**
 * A delta making `base` with `skip` bytes at `prefix` replaced by `insert` (a tree with one entry
 * spliced in): copy the prefix, insert, copy the rest. `baseSize` is the base's length.
 */
export function spliceDelta(
  baseSize: number,
  prefix: number,
  skip: number,
  insert: Buffer,
  targetSize: number,
): Buffer {
  const parts: Buffer[] = [
    Buffer.from([...deltaSize(baseSize), ...deltaSize(targetSize), ...copyOps(0, prefix)]),
  ]
  insertOps(insert, parts)
  parts.push(Buffer.from(copyOps(prefix + skip, baseSize - prefix - skip)))
  return Buffer.concat(parts)
}

/** Bytes compared natively at a time while measuring a run of equal bytes. */
const BLOCK = 4096
/** A copy shorter than this costs more than inserting its bytes. */
const MIN_COPY = 24
/** The anchor searched for where the two part. */
const ANCHOR = 32
/** How far the two candidate runs are compared to choose between them. */
const DECIDE = 64 * 1024
/** Searches that find nothing before the rest of the target is taken as new. */
const MAX_MISSES = 8

/**
 * How many bytes `a` from `ai` and `b` from `bi` have in common (at most `cap`). Compared natively
 * in blocks that double while they match and halve where they do not, then byte by byte: a long
 * run takes a number of comparisons logarithmic in its length, not one per block.
 */
export function commonRun(a: Buffer, ai: number, b: Buffer, bi: number, cap = Infinity): number {
  const max = Math.min(a.length - ai, b.length - bi, cap)
  let n = 0
  let block = BLOCK
  while (block >= 32 && n < max) {
    const len = Math.min(block, max - n)
    if (a.compare(b, bi + n, bi + n + len, ai + n, ai + n + len) === 0) {
      n += len
      block *= 2
    } else block >>= 1
  }
  while (n < max && a[ai + n] === b[bi + n]) n++
  return n
}

/**
 * A git delta making `target` from `base`. Runs of the target found in the base become copies,
 * the rest inserts; when nothing of the target is found in the base, the delta is one insert (a
 * caller storing it whole does better: `worthIt`).
 */
export function deltaOf(base: Buffer, target: Buffer): Buffer {
  const parts: Buffer[] = [Buffer.from([...deltaSize(base.length), ...deltaSize(target.length)])]
  let bi = 0
  let ti = 0
  let pending = ti // target bytes not yet emitted start here (an insert in waiting)
  let misses = 0
  const flush = (upTo: number): void => {
    if (upTo > pending) insertOps(target.subarray(pending, upTo), parts)
    pending = upTo
  }
  while (ti < target.length) {
    const run = bi < base.length ? commonRun(base, bi, target, ti) : 0
    if (run >= MIN_COPY) {
      flush(ti)
      parts.push(Buffer.from(copyOps(bi, run)))
      bi += run
      ti += run
      pending = ti
      continue
    }
    // Past the base's end, or nothing found often enough: the rest of the target is new.
    if (bi >= base.length || misses >= MAX_MISSES || target.length - ti < ANCHOR) break
    // Where the two part: either the base skips bytes (the target's next bytes are further on
    // in the base), or the target has new bytes (the base's next bytes come later in the target).
    // Both are looked for; the one that runs longer wins (an anchor can recur by chance).
    const anchor = target.subarray(ti, ti + ANCHOR)
    let j = base.indexOf(anchor, bi)
    const k = bi + ANCHOR <= base.length ? target.indexOf(base.subarray(bi, bi + ANCHOR), ti + 1) : -1
    // Earlier in the base (moved bytes) only when neither is found ahead: that search reads the
    // whole base, and a step's new turn (not in the base at all) made it run once per miss.
    if (j < 0 && k < 0 && bi > 0) j = base.subarray(0, bi + ANCHOR).indexOf(anchor)
    // Compared up to a bound: the winner's run is counted whole when it is copied.
    const runJ = j >= 0 ? commonRun(base, j, target, ti, DECIDE) : 0
    const runK = k >= 0 ? commonRun(base, bi, target, k, DECIDE) : 0
    if (runJ > 0 || runK > 0) {
      if (runJ >= runK) bi = j
      else ti = k // target[pending..k) is new: inserted when the next copy starts
      continue
    }
    // Neither meets the other here: take a stretch of the target as new and look again further on.
    misses++
    ti = Math.min(target.length, ti + ANCHOR)
  }
  flush(target.length)
  return Buffer.concat(parts)
}

/** Whether a delta is worth storing instead of the whole object (it is clearly smaller). */
export const worthIt = (delta: Buffer, targetSize: number): boolean => delta.length < targetSize / 2

/** Apply a git delta to `base` (for tests and checks; git and isomorphic-git read deltas themselves). */
export function applyDelta(base: Buffer, delta: Buffer): Buffer {
  let at = 0
  const size = (): number => {
    let n = 0
    let shift = 0
    let byte: number
    do {
      byte = delta[at++] as number
      n += (byte & 0x7f) * 2 ** shift
      shift += 7
    } while (byte & 0x80)
    return n
  }
  if (size() !== base.length) throw new Error('the delta is for a base of another size')
  const out = Buffer.alloc(size())
  let o = 0
  while (at < delta.length) {
    const op = delta[at++] as number
    if (op & 0x80) {
      let offset = 0
      let n = 0
      for (let i = 0; i < 4; i++) if (op & (1 << i)) offset += (delta[at++] as number) * 2 ** (8 * i)
      for (let i = 0; i < 3; i++) if (op & (0x10 << i)) n |= (delta[at++] as number) << (8 * i)
      if (n === 0) n = 0x10000
      base.copy(out, o, offset, offset + n)
      o += n
    } else if (op > 0) {
      delta.copy(out, o, at, at + op)
      o += op
      at += op
    } else throw new Error('a delta instruction 0 is reserved')
  }
  if (o !== out.length) throw new Error(`the delta made ${o} bytes of ${out.length}`)
  return out
}
