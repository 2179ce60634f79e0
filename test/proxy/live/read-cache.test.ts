import { readWhole, type ReadFacts } from '../../../proxy/core/incremental'
import { anthropic } from '../../../proxy/dialects'
import { CONVERSATIONS_PER_ADDRESS, ReadCache } from '../../../proxy/live/read-cache'

const factsOf = (bytes: number, text = 'x'): ReadFacts =>
  readWhole(
    Buffer.from(JSON.stringify({ model: 'm', messages: [{ role: 'user', content: text.repeat(bytes) }] })),
    anthropic,
  ) as ReadFacts

test('the cache keeps within its budget, dropping the least recently used address first', () => {
  const one = factsOf(100_000, 'a')
  const cache = new ReadCache(3 * 3 * one.bytes.length)
  cache.keep('a', one)
  cache.keep('b', factsOf(100_000, 'b'))
  cache.keep('c', factsOf(100_000, 'c'))
  expect(cache.nearest('a', one.bytes)?.facts).toBe(one) // a is now the most recent
  cache.keep('d', factsOf(100_000, 'd'))
  expect(cache.nearest('b', one.bytes)).toBeUndefined()
  expect(cache.nearest('a', one.bytes)?.facts).toBe(one)
  expect(cache.held.agents).toBe(3)
  expect(cache.held.bytes).toBeLessThanOrEqual(cache.budget)
})

test('a request larger than the whole budget is not kept', () => {
  const cache = new ReadCache(1_000_000)
  cache.keep('huge', factsOf(2_000_000))
  expect(cache.held).toEqual({ bytes: 0, agents: 0 })
})

test('one address keeps a few conversations, and a request finds the one it shares the longest prefix with', () => {
  const cache = new ReadCache(100_000_000)
  const main = factsOf(50_000, 'm')
  const side = factsOf(50_000, 's')
  cache.keep('a', main)
  cache.keep('a', side)
  const next = factsOf(50_001, 'm')
  expect(cache.nearest('a', next.bytes)).toEqual({
    facts: main,
    shared: main.bytes.length - 4, // up to the end of its text: `"}]}` against `m"}]}`
    continues: true,
  })
  expect(cache.nearest('a', factsOf(50_001, 's').bytes)?.facts).toBe(side)
  // The conversation moved on: its newer facts take the place of those it was read on.
  cache.keep('a', next, main)
  expect(cache.nearest('a', factsOf(50_002, 'm').bytes)?.facts).toBe(next)
  expect(cache.held.bytes).toBe(3 * (next.bytes.length + side.bytes.length))
  for (let k = 0; k < CONVERSATIONS_PER_ADDRESS + 2; k++) cache.keep('a', factsOf(1000, String(k)))
  expect(cache.held.bytes).toBeLessThan(3 * next.bytes.length)
})

test('a forgotten address keeps nothing', () => {
  const cache = new ReadCache(10_000_000)
  cache.keep('a', factsOf(100_000))
  cache.keep('a', factsOf(120_000, 'y'))
  cache.forget('a')
  expect(cache.held).toEqual({ bytes: 0, agents: 0 })
})
