/**
 * core/json-scan, the byte scanner: the top-level members through odd spacing and escapes, a
 * repeated key refused, an array's first elements and its entries, the prefix two bodies share.
 */
import { arrayPrefixEnd, commonPrefix, entriesOf, scanTopLevel } from '../../../proxy/core/json-scan'
import { scan } from '../../support/scanned'

describe('scanTopLevel', () => {
  it('finds each member span through odd spacing, nested values and escaped quotes', () => {
    const text = ' \n{ "model" :"m\\"x" ,\t"tools":[ {"a":"]}"} ] , "n" : 2.50 ,"big":12345678901234567890}\n'
    const { body, top } = scan(text)
    const slice = (k: string) => {
      const s = top.keys.get(k)
      if (!s) throw new Error(`no ${k}`)
      return [
        body.toString('utf8', s.keyStart, s.keyStart + k.length + 2),
        body.toString('utf8', s.valueStart, s.valueEnd),
      ]
    }
    expect(slice('model')).toEqual(['"model"', '"m\\"x"'])
    expect(slice('tools')).toEqual(['"tools"', '[ {"a":"]}"} ]'])
    expect(slice('n')).toEqual(['"n"', '2.50'])
    expect(slice('big')).toEqual(['"big"', '12345678901234567890'])
    expect([body[top.open], body[top.close]]).toEqual([0x7b, 0x7d])
  })

  it('decodes escaped keys and keeps non-ASCII keys and strings ending in escaped backslashes', () => {
    const { top } = scan('{"tool\\u0073":[],"größe":"a\\\\","x":"\\\\\\""}')
    expect([...top.keys.keys()]).toEqual(['tools', 'größe', 'x'])
  })

  it('refuses a duplicated top-level key, plain or escaped', () => {
    expect(scanTopLevel(Buffer.from('{"tools":[],"tools":[1]}'))).toEqual({
      ok: false,
      error: 'duplicated top-level key "tools"',
    })
    expect(scanTopLevel(Buffer.from('{"tools":[],"a":{"tools":1},"tool\\u0073":[1]}'))).toEqual({
      ok: false,
      error: 'duplicated top-level key "tools"',
    })
  })

  it('allows a repeated key below the top level', () => {
    expect(scanTopLevel(Buffer.from('{"a":{"k":1,"k":2},"b":[{"k":1},{"k":2}]}')).ok).toBe(true)
  })

  it('refuses a body that is not an object', () => {
    for (const text of ['[1,2]', '"s"', '12', 'null', ''])
      expect(scanTopLevel(Buffer.from(text)).ok).toBe(false)
  })

  it('refuses garbage without throwing', () => {
    for (const text of [
      '{',
      '{"a',
      '{"a":',
      '{"a":[1,2',
      '{"a":"x',
      '{"a" 1}',
      '{"a":1 "b":2}',
      '{"a":1}x',
      '{"a":}',
      '{1:2}',
    ]) {
      expect(scanTopLevel(Buffer.from(text)).ok).toBe(false)
    }
  })

  it('reads an empty object as no members', () => {
    const { top } = scan(' { \n } ')
    expect(top.keys.size).toBe(0)
    expect([top.open, top.close]).toEqual([1, 5])
  })
})

describe('arrayPrefixEnd', () => {
  it('ends just past the first n elements, past the last when there are fewer, and is -1 on a malformed one', () => {
    const b = Buffer.from('[ {"a":"x]"} , [1,2] ,"s" ]')
    const text = (end: number) => b.subarray(0, end).toString()
    expect(text(arrayPrefixEnd(b, 0, 0))).toBe('[')
    expect(text(arrayPrefixEnd(b, 0, 1))).toBe('[ {"a":"x]"}')
    expect(text(arrayPrefixEnd(b, 0, 2))).toBe('[ {"a":"x]"} , [1,2]')
    expect(text(arrayPrefixEnd(b, 0, 9))).toBe('[ {"a":"x]"} , [1,2] ,"s"')
    expect(arrayPrefixEnd(Buffer.from('[]'), 0, 3)).toBe(1)
    expect(arrayPrefixEnd(Buffer.from('[{"a":1'), 0, 1)).toBe(-1)
    expect(arrayPrefixEnd(Buffer.from('{}'), 0, 1)).toBe(-1)
  })
})

describe('commonPrefix and entriesOf', () => {
  test('commonPrefix is the length of the longest shared start, however long', () => {
    const a = Buffer.alloc(100_000, 1)
    const b = Buffer.from(a)
    expect(commonPrefix(a, b)).toBe(100_000)
    b[70_001] = 2
    expect(commonPrefix(a, b)).toBe(70_001)
    expect(commonPrefix(a, b.subarray(0, 10))).toBe(10)
    expect(commonPrefix(Buffer.from('x'), Buffer.from('y'))).toBe(0)
  })

  test('entriesOf gives every entry of an array its span, and refuses a malformed one', () => {
    const b = Buffer.from('[ {"a":1} , "s",[2] ]')
    expect(entriesOf(b, 0)).toEqual({ starts: [2, 12, 16], ends: [9, 15, 19] })
    expect(entriesOf(Buffer.from('[]'), 0)).toEqual({ starts: [], ends: [] })
    expect(entriesOf(Buffer.from('[1,]'), 0)).toBeUndefined()
  })
})
