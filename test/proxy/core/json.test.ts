/**
 * proxy/core/json: what counts as a JSON object, and the comparison every hold and `why` uses.
 * Rules: arrays and null are not objects; `withoutCacheControl` removes the `cache_control` key at
 * any depth without touching its input and answers the very same value when there is none to
 * remove (no copy on the hot path); `sameIgnoringCacheControl` is deep equality blind to those
 * markers only, and undefined equals only undefined.
 */
import { isObject, type Json, sameIgnoringCacheControl, withoutCacheControl } from '../../../proxy/core/json'

const cc = { type: 'ephemeral' }

describe('isObject', () => {
  it.each<[unknown, boolean]>([
    [{}, true],
    [{ a: 1 }, true],
    [[], false],
    [null, false],
    ['{}', false],
    [1, false],
    [undefined, false],
  ])('answers %j → %s', (v, want) => {
    expect(isObject(v)).toBe(want)
  })
})

describe('withoutCacheControl', () => {
  it('answers the same value (not a copy) when there is no marker anywhere', () => {
    const body: Json = {
      model: 'claude-sonnet-4-5',
      system: [{ type: 'text', text: 'Be brief.' }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
    }
    expect(withoutCacheControl(body)).toBe(body)
    for (const scalar of [null, true, 3, 'cache_control'] as Json[])
      expect(withoutCacheControl(scalar)).toBe(scalar)
  })

  it('removes markers at every depth and copies only the paths that held one', () => {
    const untouched = [{ type: 'text', text: 'no marker here' }]
    const body: Json = {
      cache_control: cc,
      tools: [{ name: 'Read', input_schema: { type: 'object' }, cache_control: cc }],
      system: untouched,
      messages: [
        {
          role: 'user',
          content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral', ttl: '1h' } }],
        },
      ],
    }
    const before = JSON.stringify(body)
    const out = withoutCacheControl(body) as Record<string, Json>
    expect(out).toEqual({
      tools: [{ name: 'Read', input_schema: { type: 'object' } }],
      system: untouched,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
    })
    expect(out.system).toBe(untouched)
    expect(JSON.stringify(body)).toBe(before) // the input is not mutated
  })

  it('leaves the string "cache_control" alone where it is a value, not a key', () => {
    const v: Json = { text: 'cache_control', list: ['cache_control'] }
    expect(withoutCacheControl(v)).toBe(v)
  })
})

describe('sameIgnoringCacheControl', () => {
  it.each<[string, Json | undefined, Json | undefined, boolean]>([
    [
      'blocks that differ only by a marker',
      [{ type: 'text', text: 'a', cache_control: cc }],
      [{ type: 'text', text: 'a' }],
      true,
    ],
    [
      'markers of different lifetimes',
      { x: 1, cache_control: cc },
      { x: 1, cache_control: { type: 'ephemeral', ttl: '1h' } },
      true,
    ],
    ['objects whose keys are in another order', { a: 1, b: [1, 2] }, { b: [1, 2], a: 1 }, true],
    ['blocks whose text differs', [{ type: 'text', text: 'a' }], [{ type: 'text', text: 'b' }], false],
    ['arrays in another order', [1, 2], [2, 1], false],
    ['a string and its one text block', 'a', [{ type: 'text', text: 'a' }], false],
    ['an extra key that is not a marker', { a: 1 }, { a: 1, b: null }, false],
    ['undefined and undefined', undefined, undefined, true],
    ['undefined and null', undefined, null, false],
    ['null and undefined', null, undefined, false],
  ])('compares %s', (_what, a, b, want) => {
    expect(sameIgnoringCacheControl(a, b)).toBe(want)
  })
})
