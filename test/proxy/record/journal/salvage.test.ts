/**
 * record/journal/salvage: a torn HEAD is read back from its whole properties only when they hold
 * the status and headers; an answer is whole by a repaired HEAD unless a declared length says
 * otherwise; a lost tail's count of numbers errs high.
 */
import { numbersIn, repairHead, wholeByHead } from '../../../../proxy/record/journal/salvage'

const HEAD = {
  status: 200,
  headers: { 'content-type': 'text/event-stream' },
  ttfb_ms: 3,
  total_ms: 9,
  ended_at: '2026-12-06T00:00:01.000Z',
}
const written = Buffer.from(JSON.stringify({ ...HEAD, bytes: 1234 }))

describe('a torn HEAD', () => {
  it('is read back from its whole properties when they hold the status and headers', () => {
    expect(repairHead(written.subarray(0, written.length - 7))).toEqual(HEAD)
    expect(repairHead(written.subarray(0, written.indexOf('"ended_at"') + 4))).toMatchObject({
      status: 200,
      headers: HEAD.headers,
      ttfb_ms: 3,
      total_ms: 9,
    })
  })

  it('is not read back when it was cut inside or before its headers', () => {
    expect(repairHead(written.subarray(0, written.indexOf('"headers"') + 14))).toBeUndefined()
    expect(repairHead(written.subarray(0, 8))).toBeUndefined()
    expect(repairHead(Buffer.alloc(0))).toBeUndefined()
  })
})

describe('an answer read with a repaired HEAD', () => {
  it('is whole unless its declared length says it is short', () => {
    expect(wholeByHead(HEAD, 10)).toBe(true)
    expect(wholeByHead({ ...HEAD, headers: { 'content-length': '10' } }, 10)).toBe(true)
    expect(wholeByHead({ ...HEAD, headers: { 'content-length': '20' } }, 10)).toBe(false)
  })
})

describe("a lost tail's numbers", () => {
  it('count one step per smallest SEND begun, at least one for any lost byte', () => {
    expect(numbersIn(3, 1, 500)).toBe(4)
    expect(numbersIn(3, 1000, 500)).toBe(5)
    expect(numbersIn(3, 1001, 500)).toBe(6)
    expect(numbersIn(3, 0, 500)).toBe(3)
  })
})
