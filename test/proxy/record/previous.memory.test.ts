/**
 * Memory is bounded: an agent whose copy of its previous request was dropped (here: a budget of
 * 0) reads its record from disk, and the hold still holds.
 */
import { startProxy } from '../../support/harness'

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
      expect(p.server.ctx.records.previousRecords.held.bytes).toBe(0)
    } finally {
      await p.close()
    }
  })
})
