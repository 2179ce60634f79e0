/**
 * record/journal/format: a frame header is 16 bytes (type, version, reserved zeros, step, length,
 * CRC-32 over the header's first 12 bytes and the payload); only a header with a known version and
 * type and zero reserved bytes is legible; a frame is intact only when all of it is there and
 * matches the CRC; an older journal's version 1 frames (CRC of the payload alone) still read.
 */
import zlib from 'node:zlib'
import {
  FRAME,
  header,
  HEADER_BYTES,
  LEGACY_VERSION,
  payloadIntact,
  readHeader,
  VERSION,
} from '../../../../proxy/record/journal/format'

describe('a frame header', () => {
  it('reads back the type, step, length and CRC it was written with', () => {
    const payload = [Buffer.from('abc'), Buffer.from('def')]
    const h = header(FRAME.CHUNK, 7, payload)
    expect(h.length).toBe(HEADER_BYTES)
    expect(readHeader(h, 0)).toEqual({
      version: VERSION,
      type: FRAME.CHUNK,
      step: 7,
      length: 6,
      crc: zlib.crc32(Buffer.from('abcdef'), zlib.crc32(h.subarray(0, 12))) >>> 0,
    })
    expect(h[1]).toBe(VERSION)
  })

  it('is not legible with another version, an unknown type, set reserved bytes, or cut short', () => {
    const h = header(FRAME.SEND, 1, [Buffer.from('x')])
    for (const [at, value] of [
      [1, 3],
      [0, 9],
      [2, 1],
    ] as const) {
      const bad = Buffer.from(h)
      bad[at] = value
      expect(readHeader(bad, 0)).toBeUndefined()
    }
    expect(readHeader(h.subarray(0, 15), 0)).toBeUndefined()
  })

  it('checks the step and length with its CRC: a flipped bit in the step number is caught', () => {
    const frame = Buffer.concat([header(FRAME.SEND, 3, [Buffer.from('{}')]), Buffer.from('{}')])
    frame.writeUInt32LE(3 ^ 0x100, 4)
    expect(payloadIntact(frame, readHeader(frame, 0)!, HEADER_BYTES)).toBe(false)
  })

  it('reads a version 1 frame (an older journal), whose CRC covers the payload only', () => {
    const payload = Buffer.from('{"old":true}')
    const h = Buffer.alloc(HEADER_BYTES)
    h.writeUInt8(FRAME.SEND, 0)
    h.writeUInt8(LEGACY_VERSION, 1)
    h.writeUInt32LE(4, 4)
    h.writeUInt32LE(payload.length, 8)
    h.writeUInt32LE(zlib.crc32(payload) >>> 0, 12)
    const frame = Buffer.concat([h, payload])
    expect(readHeader(frame, 0)).toMatchObject({ version: LEGACY_VERSION, step: 4 })
    expect(payloadIntact(frame, readHeader(frame, 0)!, HEADER_BYTES)).toBe(true)
  })

  it('has an intact payload only when it is whole and matches its CRC', () => {
    const frame = Buffer.concat([header(FRAME.HEAD, 1, [Buffer.from('{}')]), Buffer.from('{}')])
    const h = readHeader(frame, 0)!
    expect(payloadIntact(frame, h, HEADER_BYTES)).toBe(true)
    expect(payloadIntact(frame.subarray(0, frame.length - 1), h, HEADER_BYTES)).toBe(false)
    const flipped = Buffer.from(frame)
    flipped.writeUInt8(flipped.readUInt8(HEADER_BYTES) ^ 1, HEADER_BYTES)
    expect(payloadIntact(flipped, h, HEADER_BYTES)).toBe(false)
  })
})
