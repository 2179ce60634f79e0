/**
 * Git objects for the step-commit hot path: blob, tree and commit bodies hashed with SHA-1, and
 * written as ONE packfile (+ its v2 index) per batch, the way `git fast-import` does, instead of
 * one loose file per object. Invariant: the `.pack` lands before its `.idx` (git finds packs by
 * their index), each through temp file + rename, so a crash leaves no half pack git would read.
 * Formats: https://git-scm.com/docs/pack-format, https://git-scm.com/docs/gitformat-pack
 */
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import zlib from 'node:zlib'
import { fsyncDir, writeFileAtomicSync } from '../atomic'
import { spliceDelta } from './delta'
import { type GitObject, type ObjectType, sizeOf } from './objects'

/** The pack entry header: type and size, size in 4 + 7·n bits, little-endian groups. */
const TYPE_CODE: Record<ObjectType, number> = { commit: 1, tree: 2, blob: 3 }
/** The pack entry type of a delta whose base is named by its offset in the same pack. */
const OFS_DELTA = 6
/** Longest chain of deltas written (a reader applies them all to get the object back). */
const MAX_DELTA_DEPTH = 16

function entryHeader(type: number, size: number): Buffer {
  const bytes: number[] = []
  let byte = (type << 4) | (size & 0x0f)
  let rest = Math.floor(size / 16)
  while (rest > 0) {
    bytes.push(byte | 0x80)
    byte = rest & 0x7f
    rest = Math.floor(rest / 128)
  }
  bytes.push(byte)
  return Buffer.from(bytes)
}

/** Below this size an object is stored in its zlib stream, not compressed: there is little to gain. */
const STORE_BELOW = 512

/**
 * An object's zlib stream (RFC 1950). Small objects are stored: a header, one uncompressed block
 * and the Adler-32, made here without setting up a compressor. Others go through zlib with a
 * window and hash sized to the object (a stream declares its window and any inflater reads it), so
 * a small meta does not pay for zlib's full-size state: blobs and commits deflated at level 1,
 * trees at level 0 (stored blocks): a tree is mostly 20-byte object ids, which do not compress, so
 * deflating one costs time for nothing.
 * https://www.rfc-editor.org/rfc/rfc1950 https://www.rfc-editor.org/rfc/rfc1951#section-3.2.4
 */
function deflate(type: ObjectType, body: Buffer): Buffer {
  if (body.length < STORE_BELOW) return stored(body)
  const windowBits = Math.max(9, Math.min(15, Math.ceil(Math.log2(body.length + 262))))
  const level = type === 'tree' ? 0 : 1
  return zlib.deflateSync(body, { level, windowBits, memLevel: Math.max(1, windowBits - 7) })
}

/** A zlib stream holding `body` in one stored block (at most 65 535 bytes). */
function stored(body: Buffer): Buffer {
  const out = Buffer.allocUnsafe(2 + 5 + body.length + 4)
  out[0] = 0x78 // deflate, 32 KB window
  out[1] = 0x01 // no dictionary, fastest; (0x78 << 8 | 0x01) % 31 === 0
  out[2] = 0x01 // BFINAL, BTYPE 00 (stored)
  out.writeUInt16LE(body.length, 3)
  out.writeUInt16LE(~body.length & 0xffff, 5)
  body.copy(out, 7)
  out.writeUInt32BE(adler32(body), 7 + body.length)
  return out
}

function adler32(b: Buffer): number {
  let a = 1
  let s = 0
  for (let i = 0; i < b.length; i++) {
    a = (a + (b[i] as number)) % 65521
    s = (s + a) % 65521
  }
  return ((s << 16) | a) >>> 0
}

/** The distance back to a delta's base, as OFS_DELTA writes it (7 bits a byte, most significant first, +1 per continuation). */
function baseDistance(n: number): Buffer {
  const bytes = [n & 0x7f]
  n = Math.floor(n / 128)
  while (n > 0) {
    n -= 1
    bytes.unshift(0x80 | (n & 0x7f))
    n = Math.floor(n / 128)
  }
  return Buffer.from(bytes)
}

/** Pack directories known to exist (created once per process). */
const packDirs = new Set<string>()

function u32(n: number): Buffer {
  const b = Buffer.alloc(4)
  b.writeUInt32BE(n >>> 0)
  return b
}

/**
 * Write `objects` (duplicates dropped) as one pack in `<gitdir>/objects/pack/`. Synchronous: it
 * runs in the commit worker, where blocking costs nothing. With `durable`, the pack, its index and
 * their directory entries are on the disk when this returns (a ref may then name what it holds).
 * Returns the pack's name, or undefined when there was nothing to write.
 */
export function writePack(
  gitdir: string,
  objects: readonly GitObject[],
  options: { durable?: boolean } = {},
): string | undefined {
  const unique = [...new Map(objects.map((o) => [o.oid, o])).values()]
  if (unique.length === 0) return undefined
  const parts: Buffer[] = [Buffer.from('PACK'), u32(2), u32(unique.length)]
  const sum = createHash('sha1')
  for (const p of parts) sum.update(p)
  let offset = 12
  const entries: { oid: string; offset: number; crc: number }[] = []
  /** Where each object written so far starts, and how many deltas deep it is. */
  const written = new Map<string, { offset: number; depth: number }>()
  for (const o of unique) {
    const base = o.edit && written.get(o.edit.base.oid)
    let header: Buffer
    let data: Buffer
    let depth = 0
    if (o.edit && base && base.depth < MAX_DELTA_DEPTH) {
      const d = spliceDelta(sizeOf(o.edit.base), o.edit.prefix, o.edit.skip, o.edit.insert, sizeOf(o))
      header = Buffer.concat([entryHeader(OFS_DELTA, d.length), baseDistance(offset - base.offset)])
      data = deflate('blob', d)
      depth = base.depth + 1
    } else {
      header = entryHeader(TYPE_CODE[o.type], o.body.length)
      data = deflate(o.type, o.body)
    }
    written.set(o.oid, { offset, depth })
    entries.push({ oid: o.oid, offset, crc: zlib.crc32(data, zlib.crc32(header)) })
    parts.push(header, data)
    sum.update(header).update(data)
    offset += header.length + data.length
  }
  const packSum = sum.digest()
  parts.push(packSum)

  entries.sort((a, b) => (a.oid < b.oid ? -1 : a.oid > b.oid ? 1 : 0))
  const fanout = Buffer.alloc(256 * 4)
  for (let i = 0, e = 0; i < 256; i++) {
    while (e < entries.length && parseInt((entries[e] as { oid: string }).oid.slice(0, 2), 16) <= i) e++
    fanout.writeUInt32BE(e, i * 4)
  }
  const idxBody = Buffer.concat([
    Buffer.from([0xff, 0x74, 0x4f, 0x63]),
    u32(2),
    fanout,
    ...entries.map((e) => Buffer.from(e.oid, 'hex')),
    ...entries.map((e) => u32(e.crc)),
    ...entries.map((e) => u32(e.offset)),
    packSum,
  ])
  const idx = Buffer.concat([idxBody, createHash('sha1').update(idxBody).digest()])

  const name = `pack-${packSum.toString('hex')}`
  const dir = path.join(gitdir, 'objects', 'pack')
  if (!packDirs.has(dir)) {
    fs.mkdirSync(dir, { recursive: true })
    packDirs.add(dir)
  }
  // Read-only like git's own packs; a `tmp_` leftover of a crash is removed by `git prune`.
  const fsync = options.durable === true
  writeFileAtomicSync(path.join(dir, `${name}.pack`), parts, {
    mode: 0o444,
    tempPrefix: 'tmp_pack_hf',
    fsync,
  })
  writeFileAtomicSync(path.join(dir, `${name}.idx`), idx, { mode: 0o444, tempPrefix: 'tmp_pack_hf', fsync })
  if (fsync) fsyncDir(dir)
  return name
}
