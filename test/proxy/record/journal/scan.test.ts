/**
 * record/journal/scan: the frames of one file and the damage between them. Whole frames are read
 * in order; zeros to the end of a file (a tail a power cut took before it was flushed) are one
 * torn region; zeros before a whole frame are corrupt (something was there); a flipped payload
 * byte costs only its frame; an empty file has no frame and no damage.
 */
import { FRAME, header, HEADER_BYTES } from '../../../../proxy/record/journal/format'
import { scanFrames } from '../../../../proxy/record/journal/scan'

const frame = (type: (typeof FRAME)[keyof typeof FRAME], step: number, payload: Buffer): Buffer =>
  Buffer.concat([header(type, step, [payload]), payload])

describe('scanFrames', () => {
  it('reads whole frames in order, each payload where it is', () => {
    const a = frame(FRAME.CHUNK, 1, Buffer.from('one'))
    const b = frame(FRAME.CHUNK, 2, Buffer.from('two!'))
    const { frames, damage } = scanFrames('f', Buffer.concat([a, b]))
    expect(damage).toEqual([])
    expect(frames.map((f) => [f.step, f.offset, f.payload.toString()])).toEqual([
      [1, HEADER_BYTES, 'one'],
      [2, a.length + HEADER_BYTES, 'two!'],
    ])
  })

  it('loses only the frame a flipped payload byte is in', () => {
    const a = frame(FRAME.CHUNK, 1, Buffer.from('one'))
    const b = frame(FRAME.CHUNK, 2, Buffer.from('two'))
    const data = Buffer.concat([a, b])
    data.writeUInt8((data[HEADER_BYTES + 1] as number) ^ 0xff, HEADER_BYTES + 1)
    const { frames, damage } = scanFrames('f', data)
    expect(frames.map((f) => f.step)).toEqual([2])
    expect(damage).toEqual([
      { file: 'f', offset: 0, length: a.length, kind: 'corrupt', step: 1, type: FRAME.CHUNK },
    ])
  })

  it('reads an empty file as no frame and no damage', () => {
    expect(scanFrames('f', Buffer.alloc(0))).toEqual({ frames: [], damage: [] })
  })

  it('scans a file of zeros to its end (a tail a power cut took before it was flushed) as one torn region', () => {
    expect(scanFrames('f', Buffer.alloc(4096))).toEqual({
      frames: [],
      damage: [{ file: 'f', offset: 0, length: 4096, kind: 'torn' }],
    })
  })

  it('scans zeros followed by a whole frame as corrupt: something was there', () => {
    const frame = Buffer.concat([header(FRAME.SENT, 1, []), Buffer.alloc(0)])
    expect(scanFrames('f', Buffer.concat([Buffer.alloc(64), frame])).damage).toEqual([
      { file: 'f', offset: 0, length: 64, kind: 'corrupt' },
    ])
  })
})
