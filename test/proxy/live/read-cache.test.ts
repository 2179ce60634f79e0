import { readWhole, type ReadFacts } from '../../../proxy/core/incremental'
import { anthropic } from '../../../proxy/dialects'
import { ReadCache } from '../../../proxy/live/read-cache'

const factsOf = (bytes: number): ReadFacts =>
  readWhole(
    Buffer.from(JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x'.repeat(bytes) }] })),
    anthropic,
  ) as ReadFacts

test('the cache keeps within its budget, dropping the least recently used agent first', () => {
  const one = factsOf(100_000)
  const cache = new ReadCache(3 * 3 * one.bytes.length)
  cache.keep('a', one)
  cache.keep('b', factsOf(100_000))
  cache.keep('c', factsOf(100_000))
  expect(cache.get('a')).toBe(one) // a is now the most recent
  cache.keep('d', factsOf(100_000))
  expect(cache.get('b')).toBeUndefined()
  expect(cache.get('a')).toBe(one)
  expect(cache.held.agents).toBe(3)
  expect(cache.held.bytes).toBeLessThanOrEqual(cache.budget)
})

test('a request larger than the whole budget is not kept', () => {
  const cache = new ReadCache(1_000_000)
  cache.keep('huge', factsOf(2_000_000))
  expect(cache.held).toEqual({ bytes: 0, agents: 0 })
})

test("an agent's new facts replace its old ones, and a forgotten agent keeps none", () => {
  const cache = new ReadCache(10_000_000)
  cache.keep('a', factsOf(100_000))
  const newer = factsOf(120_000)
  cache.keep('a', newer)
  expect(cache.get('a')).toBe(newer)
  expect(cache.held.agents).toBe(1)
  cache.forget('a')
  expect(cache.held).toEqual({ bytes: 0, agents: 0 })
})
