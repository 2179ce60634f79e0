/**
 * One entry of a pack, as bytes: its header (type and size; a delta's base by offset or by id),
 * written and read back, and its data's zlib stream. Pure.
 * Format: https://git-scm.com/docs/gitformat-pack
 */
import zlib from 'node:zlib'
import type { ObjectType } from './objects'

/** The pack entry type of each object type. */
export const TYPE_CODE: Record<ObjectType, number> = { commit: 1, tree: 2, blob: 3 }
/** The pack entry type of a delta whose base is named by its offset in the same pack. */
export const OFS_DELTA = 6
/** The pack entry type of a delta whose base is named by its object id. */
export const REF_DELTA = 7

/** The pack entry header: type and size, size in 4 + 7·n bits, little-endian groups. */
export function entryHeader(type: number, size: number): Buffer {
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
export function deflate(type: ObjectType, body: Buffer): Buffer {
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
export function baseDistance(n: number): Buffer {
  const bytes = [n & 0x7f]
  n = Math.floor(n / 128)
  while (n > 0) {
    n -= 1
    bytes.unshift(0x80 | (n & 0x7f))
    n = Math.floor(n / 128)
  }
  return Buffer.from(bytes)
}

/** An entry's header as read: its type, where its data starts, and a delta's base (an offset for OFS_DELTA, an id for REF_DELTA). */
export function readEntryHeader(
  pack: Buffer,
  at: number,
): { type: number; sizeEnd: number; dataStart: number; baseDistance?: number; baseOid?: string } {
  let byte = pack[at] as number
  const type = (byte >> 4) & 7
  let i = at + 1
  while (byte & 0x80) byte = pack[i++] as number
  const sizeEnd = i
  if (type === OFS_DELTA) {
    byte = pack[i++] as number
    let distance = byte & 0x7f
    while (byte & 0x80) {
      byte = pack[i++] as number
      distance = (distance + 1) * 128 + (byte & 0x7f)
    }
    return { type, sizeEnd, dataStart: i, baseDistance: distance }
  }
  if (type === REF_DELTA) {
    const baseOid = pack.toString('hex', i, i + 20)
    return { type, sizeEnd, dataStart: i + 20, baseOid }
  }
  return { type, sizeEnd, dataStart: i }
}
