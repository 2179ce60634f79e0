import type { Json } from '../../../proxy/core/json'
import { sameDefinition, subMultiset } from '../../../proxy/core/tool-match'

const tool = (name: string, description = `The ${name} tool.`): Json => ({
  name,
  description,
  input_schema: { type: 'object' },
})
const nameOf = (t: Json): string | undefined =>
  t !== null && typeof t === 'object' && !Array.isArray(t) && typeof t.name === 'string' ? t.name : undefined
const [A, B, C] = [tool('A'), tool('B'), tool('C')]

describe('sameDefinition', () => {
  it('counts equal values with their keys in the same order as the same definition, markers aside', () => {
    expect(sameDefinition(A, tool('A'))).toBe(true)
    expect(sameDefinition({ ...(A as object), cache_control: { type: 'ephemeral' } }, A)).toBe(true)
    expect(sameDefinition({ a: [1, { cache_control: {}, b: 2 }] }, { a: [1, { b: 2 }] })).toBe(true)
  })

  it('tells apart a definition whose keys moved, whose text changed, or whose shape differs', () => {
    expect(sameDefinition({ a: 1, b: 2 }, { b: 2, a: 1 })).toBe(false)
    expect(sameDefinition(A, tool('A', 'Another text.'))).toBe(false)
    expect(sameDefinition([1, 2], [1, 2, 3])).toBe(false)
    expect(sameDefinition({ a: [1] }, { a: { 0: 1 } })).toBe(false)
    expect(sameDefinition({ a: 1 }, { a: 1, b: 2 })).toBe(false)
    expect(sameDefinition(null, {})).toBe(false)
  })
})

describe('subMultiset', () => {
  it('finds nothing dropped and no reorder for the same array', () => {
    expect(subMultiset([A, B, C], [A, B, C], nameOf)).toEqual({ dropped: [], reordered: false })
  })

  it('names the dropped indices of an order-preserving subtraction', () => {
    expect(subMultiset([A, B, C], [A, C], nameOf)).toEqual({ dropped: [1], reordered: false })
    expect(subMultiset([A, B, C], [], nameOf)).toEqual({ dropped: [0, 1, 2], reordered: false })
  })

  it('reports a reorder, with or without a removal', () => {
    expect(subMultiset([A, B, C], [C, A, B], nameOf)).toEqual({ dropped: [], reordered: true })
    expect(subMultiset([A, B, C], [C, A], nameOf)).toEqual({ dropped: [1], reordered: true })
  })

  it('matches duplicates one to one, preferring an order-preserving match when there is one', () => {
    expect(subMultiset([A, B, A], [B, A], nameOf)).toEqual({ dropped: [0], reordered: false })
    expect(subMultiset([A, B, A], [A, A], nameOf)).toEqual({ dropped: [1], reordered: false })
    expect(subMultiset([A, B], [A, A], nameOf)).toBeUndefined()
  })

  it('refuses an addition or an edited definition', () => {
    expect(subMultiset([A, B], [A, B, C], nameOf)).toBeUndefined()
    expect(subMultiset([A, B], [A, C], nameOf)).toBeUndefined()
    expect(subMultiset([A, B], [tool('A', 'Edited.'), B], nameOf)).toBeUndefined()
  })

  it('compares nameless tools (hosted tools named by their type) with every nameless one', () => {
    const search = { type: 'web_search' }
    const code = { type: 'code_interpreter' }
    expect(subMultiset([search, A, code], [code, A], nameOf)).toEqual({ dropped: [0], reordered: true })
  })
})
