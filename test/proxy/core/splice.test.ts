import { applyEdits, jsonBytes, toolsEdit } from '../../../proxy/core/splice'
import type { Edit } from '../../../proxy/core/splice'
import { scan } from '../../support/scanned'

function edit(text: string, edits: Edit[]): string {
  const { body, top } = scan(text)
  const out = applyEdits(body, top, edits).toString()
  JSON.parse(out)
  return out
}

const set = (key: string, json: string): Edit => ({ key, value: Buffer.from(json) })
const remove = (key: string): Edit => ({ key, value: undefined })

describe('applyEdits', () => {
  const text =
    '{ "model": "m",\n  "n" : 2.50, "tools" : [ {"name":"a"} ],"big":12345678901234567890 ,"x":{"y":"\\u00e9"} }'

  it('replaces a value and keeps every byte outside its span', () => {
    const { body, top } = scan(text)
    const span = top.keys.get('tools')
    if (!span) throw new Error('no tools')
    const out = applyEdits(body, top, [set('tools', '[1]')])
    expect(out.subarray(0, span.valueStart)).toEqual(body.subarray(0, span.valueStart))
    expect(out.subarray(span.valueStart + 3)).toEqual(body.subarray(span.valueEnd))
    expect(out.toString()).toContain('2.50')
    expect(out.toString()).toContain('12345678901234567890')
    expect(out.toString()).toContain('"\\u00e9"')
  })

  it('replaces tools when they come first, last, or are the only key', () => {
    expect(edit('{"tools":[1] , "a":1}', [set('tools', '[2]')])).toBe('{"tools":[2] , "a":1}')
    expect(edit('{"a":1,"tools" :[1]  }', [set('tools', '[2]')])).toBe('{"a":1,"tools" :[2]  }')
    expect(edit('{ "tools":[1] }', [set('tools', '[2]')])).toBe('{ "tools":[2] }')
  })

  it('inserts an absent key after the last member, or right after the brace of an empty object', () => {
    expect(edit('{"a":1 , "b" : 2.50 }\n', [set('tools', '[1]')])).toBe('{"a":1 , "b" : 2.50,"tools":[1] }\n')
    expect(edit('{ }', [set('tools', '[1]')])).toBe('{"tools":[1] }')
    expect(edit('{}', [set('a', '1'), set('b', '2')])).toBe('{"a":1,"b":2}')
  })

  it('removes a first, middle, last or only key with exactly one adjacent comma', () => {
    const base = '{ "a":1, "b" :[2] ,"c":{"d":3} }'
    expect(edit(base, [remove('a')])).toBe('{ "b" :[2] ,"c":{"d":3} }')
    expect(edit(base, [remove('b')])).toBe('{ "a":1, "c":{"d":3} }')
    expect(edit(base, [remove('c')])).toBe('{ "a":1, "b" :[2] }')
    expect(edit('{ "tools": [] }', [remove('tools')])).toBe('{  }')
  })

  it('removes several keys, including all of them, and still yields valid JSON', () => {
    const base = '{"a":1,"b":2,"c":3,"d":4}'
    expect(JSON.parse(edit(base, [remove('b'), remove('d')]))).toEqual({ a: 1, c: 3 })
    expect(JSON.parse(edit(base, [remove('c'), remove('d')]))).toEqual({ a: 1, b: 2 })
    expect(JSON.parse(edit(base, [remove('a'), remove('b')]))).toEqual({ c: 3, d: 4 })
    expect(edit(base, [remove('a'), remove('b'), remove('c'), remove('d')])).toBe('{}')
    expect(edit(base, [remove('a'), remove('b'), remove('c'), remove('d'), set('e', '5')])).toBe('{"e":5}')
    expect(edit(base, [remove('d'), set('e', '5')])).toBe('{"a":1,"b":2,"c":3,"e":5}')
    expect(edit(base, [set('d', '[4]'), set('e', '5'), remove('a')])).toBe('{"b":2,"c":3,"d":[4],"e":5}')
  })

  it('ignores the removal of an absent key and returns the body untouched without edits', () => {
    const { body, top } = scan('{"a": 1}')
    expect(applyEdits(body, top, [remove('tools')])).toEqual(body)
    expect(applyEdits(body, top, [])).toEqual(body)
  })

  it('finds keys written with escapes and writes inserted keys encoded', () => {
    expect(edit('{"tool\\u0073":[1]}', [set('tools', '[2]')])).toBe('{"tool\\u0073":[2]}')
    expect(edit('{}', [set('a"b', '1')])).toBe('{"a\\"b":1}')
  })

  it('refuses two edits of the same key', () => {
    const { body, top } = scan('{"a":1}')
    expect(() => applyEdits(body, top, [set('a', '2'), remove('a')])).toThrow(/two edits of the key "a"/)
  })
})

describe('applyEdits on generated bodies', () => {
  // A small deterministic generator (mulberry32) so a failure reproduces.
  function rng(seed: number): () => number {
    return () => {
      seed = (seed + 0x6d2b79f5) | 0
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296
    }
  }

  it('matches the edit applied to the parsed object for any mix of replace, remove and insert', () => {
    const next = rng(7)
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)] as T
    const values = ['1', '2.50', '"s\\\\"', '[ {"k":"}"} ]', '{"a" : [1, {"b":null}]}', 'true', '"\\u0022"']
    const keys = ['a', 'b', 'tools', 'größe', 'k"q', 'z']
    for (let round = 0; round < 300; round++) {
      const present = keys.filter(() => next() < 0.5)
      const space = () => pick(['', ' ', '\n  ', '\t'])
      const text = `${space()}{${space()}${present.map((k) => `${JSON.stringify(k)}${space()}:${space()}${pick(values)}`).join(`${space()},${space()}`)}${space()}}${space()}`
      const expected = JSON.parse(text) as Record<string, unknown>
      const edits: Edit[] = keys
        .filter(() => next() < 0.5)
        .map((k) => (next() < 0.4 ? remove(k) : set(k, pick(values))))
      for (const e of edits) {
        if (e.value === undefined) delete expected[e.key]
        else expected[e.key] = JSON.parse(e.value.toString())
      }
      expect(JSON.parse(edit(text, edits))).toEqual(expected)
    }
  })
})

describe('jsonBytes and toolsEdit', () => {
  it('encodes a new value as UTF-8 JSON', () => {
    expect(jsonBytes({ a: 'é', b: [1, null] }).toString('utf8')).toBe('{"a":"é","b":[1,null]}')
  })

  it('never sends an empty tools array: an empty list removes the key', () => {
    expect(toolsEdit([])).toEqual({ key: 'tools', value: undefined })
    expect(edit('{"model":"m","tools":[{"name":"a"}]}', [toolsEdit([])])).toBe('{"model":"m"}')
    expect(edit('{"model":"m"}', [toolsEdit([{ name: 'b' }])])).toBe('{"model":"m","tools":[{"name":"b"}]}')
  })
})
