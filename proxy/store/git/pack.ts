/**
 * Writing packs: objects written as ONE packfile (+ its v2 index) the way `git fast-import` does,
 * instead of one loose file per object; a pack may start with the entries of existing packs copied
 * as they are (an agent's chain extended, small packs merged), and an object whose base is in the
 * pack is written as a delta on it (a tree with an entry spliced in, a request on the previous
 * request). Invariant: the `.pack` lands before its `.idx` (git finds packs by their index), each
 * through temp file + rename, so a crash leaves no half pack git would read; a write that fails
 * (the index refused by a full disk) removes the pack it renamed, unless that pack was there
 * before it; what a kill leaves (a temp file, a pack without its index) no index names, and the
 * next start removes it (check.ts, removeOrphans); every delta's base is earlier in the same pack
 * (git reads no delta across packs).
 * Formats: https://git-scm.com/docs/pack-format, https://git-scm.com/docs/gitformat-pack
 */
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import zlib from 'node:zlib'
import { fsyncDir, writeFileAtomicSync } from '../atomic'
import { deltaOf, spliceDelta, worthIt } from './delta'
import { type GitObject, sizeOf } from './objects'
import {
  baseDistance,
  deflate,
  entryHeader,
  OFS_DELTA,
  readEntryHeader,
  REF_DELTA,
  TYPE_CODE,
} from './pack-entry'
import { indexOf, type PackEntry, u32 } from './pack-index'

/**
 * Longest chain of deltas written: a reader applies them all to get the object back, and
 * isomorphic-git keeps no delta base between reads: a deep chain makes a fresh read (the hold's
 * previous request after a restart, a step page) slow, a shallow one makes the repository larger
 * (the read times and sizes by depth: docs/benchmarks.md, 2026-12-06; docs/performance.md).
 * A request past it is written whole, the next ones deltas on it.
 */
export const MAX_DELTA_DEPTH = 24

/**
 * The name every temp file of a pack or index written here starts with: git's own `tmp_pack_`, so
 * git tools take it for a temp file too, and `hf` for holdfast's (a start removes both: check.ts).
 */
export const PACK_TEMP_PREFIX = 'tmp_pack_hf'

/** Pack directories known to exist (created once per process). */
const packDirs = new Set<string>()

/** A pack written: its name (`pack-<sha1>`), its entries, and its length in bytes. */
export interface WrittenPack {
  name: string
  entries: PackEntry[]
  size: number
}

/**
 * A pack being made: existing packs' entries copied (`copy`), then new objects (`add`), written
 * once with `write`. Nothing is on the disk before `write`.
 */
export class PackBuilder {
  private readonly parts: Buffer[] = []
  private offset = 12
  private readonly entries: PackEntry[] = []
  private readonly byOid = new Map<string, PackEntry>()

  /** The pack's length so far (its header and entries, not its trailer). */
  get size(): number {
    return this.offset
  }

  get count(): number {
    return this.entries.length
  }

  has(oid: string): boolean {
    return this.byOid.has(oid)
  }

  /** How many deltas deep `oid` is in this pack (undefined when it is not in it). */
  depthOf(oid: string): number | undefined {
    return this.byOid.get(oid)?.depth
  }

  /**
   * Copy every entry of the pack `bytes` (its entries as its index lists them). An object already
   * here is not copied again: a delta on it is pointed at the copy here (always earlier). Entries
   * are copied as they are, in runs; only a delta whose base moved gets a new header.
   */
  copy(bytes: Buffer, listed: readonly Omit<PackEntry, 'depth'>[]): void {
    const sorted = [...listed].sort((a, b) => a.offset - b.offset)
    const end = bytes.length - 20
    /** Each copied entry's old offset → its entry here. */
    const moved = new Map<number, PackEntry>()
    let runStart = -1
    let runEnd = -1
    const flush = (): void => {
      if (runStart >= 0) this.parts.push(bytes.subarray(runStart, runEnd))
      runStart = -1
    }
    sorted.forEach((e, i) => {
      const next = i + 1 < sorted.length ? (sorted[i + 1] as { offset: number }).offset : end
      const kept = this.byOid.get(e.oid)
      if (kept) {
        moved.set(e.offset, kept)
        flush()
        return
      }
      const h = readEntryHeader(bytes, e.offset)
      let depth = 0
      let header: Buffer | undefined
      if (h.type === OFS_DELTA) {
        const base = moved.get(e.offset - (h.baseDistance as number))
        if (!base) throw new Error(`pack entry at ${e.offset} is a delta on an entry its index does not list`)
        depth = base.depth + 1
        const distance = this.offset - base.offset
        if (distance !== h.baseDistance)
          header = Buffer.concat([bytes.subarray(e.offset, h.sizeEnd), baseDistance(distance)])
      } else if (h.type === REF_DELTA) depth = (this.byOid.get(h.baseOid as string)?.depth ?? 0) + 1
      const data = bytes.subarray(h.dataStart, next)
      const entry: PackEntry = {
        oid: e.oid,
        offset: this.offset,
        depth,
        crc: header ? zlib.crc32(data, zlib.crc32(header)) : e.crc,
      }
      if (header) {
        flush()
        this.parts.push(header, data)
        this.offset += header.length + data.length
      } else {
        if (runStart < 0 || runEnd !== e.offset) {
          flush()
          runStart = e.offset
        }
        runEnd = next
        this.offset += next - e.offset
      }
      moved.set(e.offset, entry)
      this.entries.push(entry)
      this.byOid.set(e.oid, entry)
    })
    flush()
  }

  /**
   * Add `o` (unless it is here already): as a splice delta when `o.edit`'s base is here, as a
   * delta on `o.similar` when that is here and the delta is clearly smaller, else whole.
   */
  add(o: GitObject): void {
    if (this.byOid.has(o.oid)) return
    let header: Buffer | undefined
    let data: Buffer | undefined
    let depth = 0
    const editBase = o.edit && this.byOid.get(o.edit.base.oid)
    const similar = o.similar && this.byOid.get(o.similar.oid)
    if (o.edit && editBase && editBase.depth < MAX_DELTA_DEPTH) {
      const d = spliceDelta(sizeOf(o.edit.base), o.edit.prefix, o.edit.skip, o.edit.insert, sizeOf(o))
      header = Buffer.concat([entryHeader(OFS_DELTA, d.length), baseDistance(this.offset - editBase.offset)])
      data = deflate('blob', d)
      depth = editBase.depth + 1
    } else if (o.similar && similar && similar.depth < MAX_DELTA_DEPTH) {
      const d = deltaOf(o.similar.body, o.body)
      if (worthIt(d, sizeOf(o))) {
        header = Buffer.concat([entryHeader(OFS_DELTA, d.length), baseDistance(this.offset - similar.offset)])
        data = deflate('blob', d)
        depth = similar.depth + 1
      }
    }
    if (!header || !data) {
      header = entryHeader(TYPE_CODE[o.type], sizeOf(o))
      data = deflate(o.type, o.body)
    }
    const entry: PackEntry = {
      oid: o.oid,
      offset: this.offset,
      crc: zlib.crc32(data, zlib.crc32(header)),
      depth,
    }
    this.entries.push(entry)
    this.byOid.set(o.oid, entry)
    this.parts.push(header, data)
    this.offset += header.length + data.length
  }

  /**
   * Write the pack and its index into `<gitdir>/objects/pack/`. Synchronous: it runs in the commit
   * worker, where blocking costs nothing. With `durable`, the pack, its index and their directory
   * entries are on the disk when this returns (a ref may then name what it holds). Undefined when
   * there is nothing to write.
   */
  write(gitdir: string, options: { durable?: boolean } = {}): WrittenPack | undefined {
    if (this.entries.length === 0) return undefined
    const head = [Buffer.from('PACK'), u32(2), u32(this.entries.length)]
    const sum = createHash('sha1')
    for (const p of head) sum.update(p)
    for (const p of this.parts) sum.update(p)
    const packSum = sum.digest()
    const idx = indexOf(this.entries, packSum)
    const name = `pack-${packSum.toString('hex')}`
    const dir = path.join(gitdir, 'objects', 'pack')
    if (!packDirs.has(dir)) {
      fs.mkdirSync(dir, { recursive: true })
      packDirs.add(dir)
    }
    // Read-only like git's own packs; a `tmp_` leftover of a kill is removed by the next start.
    const fsync = options.durable === true
    const opts = { mode: 0o444, tempPrefix: PACK_TEMP_PREFIX, fsync }
    const packFile = path.join(dir, `${name}.pack`)
    const idxFile = path.join(dir, `${name}.idx`)
    // The same objects written again make the same pack: one that was here before is not ours to remove.
    const had = { pack: fs.existsSync(packFile), idx: fs.existsSync(idxFile) }
    writeFileAtomicSync(packFile, [...head, ...this.parts, packSum], opts)
    try {
      writeFileAtomicSync(idxFile, idx, opts)
      if (fsync) fsyncDir(dir)
    } catch (err) {
      // No ref names what this pack holds yet: without its index it would only take room. A removal
      // the disk refuses too is left to the next start; the write's own error is the one thrown.
      try {
        if (!had.idx) {
          fs.rmSync(idxFile, { force: true })
          if (!had.pack) fs.rmSync(packFile, { force: true })
        }
      } catch {
        // the next start removes it (check.ts, removeOrphans)
      }
      throw err
    }
    return { name, entries: this.entries, size: this.offset + 20 }
  }
}

/**
 * Write `objects` (duplicates dropped) as one pack in `<gitdir>/objects/pack/` (see
 * PackBuilder.write). Returns the pack's name, or undefined when there was nothing to write.
 */
export function writePack(
  gitdir: string,
  objects: readonly GitObject[],
  options: { durable?: boolean } = {},
): string | undefined {
  const pack = new PackBuilder()
  for (const o of objects) pack.add(o)
  return pack.write(gitdir, options)?.name
}
