/**
 * Pack indexes, version 2: written for a pack's entries, and read back (a chain extended, packs
 * merged). Pure: bytes in, bytes out.
 * Format: https://git-scm.com/docs/gitformat-pack#_version_2_pack_idx_files_support_packs_larger_than_4_gib_and
 */
import { createHash } from 'node:crypto'

/** One object of a pack: where its entry starts, its CRC-32 (header and data, as the index keeps it), and how many deltas deep it is. */
export interface PackEntry {
  oid: string
  offset: number
  crc: number
  depth: number
}

/** `n` as 4 bytes, big-endian. */
export function u32(n: number): Buffer {
  const b = Buffer.alloc(4)
  b.writeUInt32BE(n >>> 0)
  return b
}

/** A v2 pack index of `entries` (https://git-scm.com/docs/gitformat-pack#_version_2_pack_idx_files_support_packs_larger_than_4_gib_and). */
export function indexOf(list: readonly PackEntry[], packSum: Buffer): Buffer {
  const entries = [...list].sort((a, b) => (a.oid < b.oid ? -1 : a.oid > b.oid ? 1 : 0))
  const fanout = Buffer.alloc(256 * 4)
  for (let i = 0, e = 0; i < 256; i++) {
    while (e < entries.length && parseInt((entries[e] as PackEntry).oid.slice(0, 2), 16) <= i) e++
    fanout.writeUInt32BE(e, i * 4)
  }
  const large: Buffer[] = []
  const offsets = entries.map((e) => {
    if (e.offset < 0x80000000) return u32(e.offset)
    const b = Buffer.alloc(8)
    b.writeBigUInt64BE(BigInt(e.offset))
    large.push(b)
    return u32(0x80000000 | (large.length - 1))
  })
  const body = Buffer.concat([
    Buffer.from([0xff, 0x74, 0x4f, 0x63]),
    u32(2),
    fanout,
    ...entries.map((e) => Buffer.from(e.oid, 'hex')),
    ...entries.map((e) => u32(e.crc)),
    ...offsets,
    ...large,
    packSum,
  ])
  return Buffer.concat([body, createHash('sha1').update(body).digest()])
}

/** The entries a v2 pack index lists (offset and CRC-32 by object id). */
export function readIndex(idx: Buffer): Omit<PackEntry, 'depth'>[] {
  if (idx.readUInt32BE(0) !== 0xff744f63 || idx.readUInt32BE(4) !== 2)
    throw new Error('not a version 2 pack index')
  const n = idx.readUInt32BE(8 + 255 * 4)
  const oids = 8 + 256 * 4
  const crcs = oids + n * 20
  const offsets = crcs + n * 4
  const large = offsets + n * 4
  const out: Omit<PackEntry, 'depth'>[] = []
  for (let i = 0; i < n; i++) {
    let offset = idx.readUInt32BE(offsets + i * 4)
    if (offset & 0x80000000) offset = Number(idx.readBigUInt64BE(large + (offset & 0x7fffffff) * 8))
    out.push({
      oid: idx.toString('hex', oids + i * 20, oids + i * 20 + 20),
      crc: idx.readUInt32BE(crcs + i * 4),
      offset,
    })
  }
  return out
}
