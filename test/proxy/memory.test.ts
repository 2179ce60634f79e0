/**
 * Memory is bounded: the agents' copies of their previous requests share one byte budget, the
 * least recently used dropped first, and an agent whose copy was dropped reads its record from
 * disk (the hold still holds).
 */
import { AgentState, PreviousCache } from '../../proxy/agents'
import { startProxy } from '../support/harness'

/** An AgentState for the cache's bookkeeping only (never initialized, never commits). */
const agent = (name: string): AgentState =>
  new AgentState({ name: 'w' } as never, name, undefined as never, undefined as never)

describe('PreviousCache', () => {
  it('drops the least recently used copies past its budget and keeps the one just used', () => {
    const cache = new PreviousCache(100)
    const [a, b, c] = [agent('a'), agent('b'), agent('c')]
    for (const x of [a, b, c]) x.cached = { step: 1, stamp: '', previous: {} as never }
    cache.touch(a, 40)
    cache.touch(b, 40)
    cache.touch(a, 40) // a used again: b is now the oldest
    cache.touch(c, 40)
    expect(cache.held).toEqual({ bytes: 80, agents: 2 })
    expect(b.cached).toBeUndefined()
    expect(a.cached).toBeDefined()
    expect(c.cached).toBeDefined()
  })

  it('keeps no copy larger than the whole budget', () => {
    const cache = new PreviousCache(10)
    const a = agent('a')
    a.cached = { step: 1, stamp: '', previous: {} as never }
    cache.touch(a, 11)
    expect(a.cached).toBeUndefined()
    expect(cache.held).toEqual({ bytes: 0, agents: 0 })
  })
})

describe('an agent without a copy in memory', () => {
  it('reads its previous record from disk, and the hold still holds', async () => {
    const p = await startProxy({ config: { limits: { previous_cache_bytes: 0 } } })
    try {
      const tool = (name: string) => ({ name, input_schema: { type: 'object' } })
      const send = async (tools: string[], messages: object[]) => {
        const r = await fetch(`${p.url}/w/default/a/forgetful/v1/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
          body: JSON.stringify({
            model: 'claude-sonnet-4-5',
            max_tokens: 8,
            tools: tools.map(tool),
            messages,
          }),
        })
        expect(r.status).toBe(200)
        await r.text()
      }
      const first = { role: 'user', content: 'hi' }
      await send(['a', 'b'], [first])
      await send(['a'], [first, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'more' }])
      const sent = JSON.parse(p.fake.received[1]!.body.toString()) as { tools: { name: string }[] }
      expect(sent.tools.map((t) => t.name)).toEqual(['a', 'b'])
      expect(p.server.ctx.previousCache.held.bytes).toBe(0)
    } finally {
      await p.close()
    }
  })
})
