/**
 * store/git/pack-entry: one pack entry's bytes. Covers: a header's type and size read back for
 * sizes across the 4 + 7·n bit groups; an offset delta's distance to its base, and a ref delta's
 * base id, read back where the data starts; an object's zlib stream inflates to its body, stored
 * when small, deflated when not, for every object type.
 */
import { randomBytes } from 'node:crypto'
import zlib from 'node:zlib'
import {
  baseDistance,
  deflate,
  entryHeader,
  OFS_DELTA,
  readEntryHeader,
  REF_DELTA,
  TYPE_CODE,
} from '../../../../proxy/store/git/pack-entry'

describe('an entry header', () => {
  it('reads back the type and size it was written with, and where the data starts', () => {
    for (const size of [0, 1, 15, 16, 127, 128, 2047, 2048, 1 << 20, 2 ** 31 + 5]) {
      const h = entryHeader(TYPE_CODE.blob, size)
      const at = readEntryHeader(Buffer.concat([h, Buffer.from('data')]), 0)
      expect(at).toEqual({ type: TYPE_CODE.blob, sizeEnd: h.length, dataStart: h.length })
      expect(h[0]! & 0x0f).toBe(size & 0x0f)
    }
  })

  it("reads back an offset delta's distance to its base and a ref delta's base id", () => {
    for (const distance of [1, 127, 128, 16_511, 16_512, 5_000_000]) {
      const h = Buffer.concat([entryHeader(OFS_DELTA, 10), baseDistance(distance)])
      expect(readEntryHeader(Buffer.concat([Buffer.alloc(3), h]), 3)).toMatchObject({
        type: OFS_DELTA,
        baseDistance: distance,
        dataStart: 3 + h.length,
      })
    }
    const base = randomBytes(20)
    const h = Buffer.concat([entryHeader(REF_DELTA, 300), base])
    expect(readEntryHeader(h, 0)).toMatchObject({
      type: REF_DELTA,
      baseOid: base.toString('hex'),
      dataStart: h.length,
    })
  })
})

describe("an entry's data", () => {
  it('inflates to the body for every type, small bodies stored and large ones deflated', () => {
    for (const type of ['blob', 'tree', 'commit'] as const) {
      for (const body of [
        Buffer.alloc(0),
        Buffer.from('small'),
        Buffer.from('x'.repeat(100_000)),
        randomBytes(70_000),
      ]) {
        const z = deflate(type, body)
        expect(zlib.inflateSync(z).equals(body)).toBe(true)
      }
    }
    // A small body is stored: its bytes appear as they are after the zlib and block headers.
    expect(deflate('blob', Buffer.from('small')).subarray(7, 12).toString()).toBe('small')
    // A large blob compresses.
    expect(deflate('blob', Buffer.from('x'.repeat(100_000))).length).toBeLessThan(1000)
  })
})
