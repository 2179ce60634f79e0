/**
 * Costs: holdfast.yaml prices first, else the pinned price library; a model neither prices is
 * unknown (null), never $0; each cost says what it was priced as and from which table; the hold's
 * saving is what the cache reads would have cost as writes.
 */
import fs from 'node:fs'
import path from 'node:path'
import { estimateCost, LIBRARY, readInsteadOfWriteUsd } from '../../../proxy/core/cost'
import type { Usage } from '../../../generated/meta'
import { openai } from '../../../proxy/dialects'

const MTOK: Usage = { input_tokens: 1e6, output_tokens: 1e6, cache_read_tokens: 0, cache_write_tokens: 0 }

describe('estimateCost', () => {
  it('prices Opus 4.6, 4.7, 4.8 and 5 at $5/$25 and Sonnet 5 at $2/$10 per million tokens', () => {
    for (const model of ['claude-opus-4-6', 'claude-opus-4-7', 'claude-opus-4-8', 'claude-opus-5']) {
      expect(estimateCost(model, MTOK, false, undefined, 'anthropic')?.usd).toBe(30)
    }
    expect(estimateCost('claude-sonnet-5', MTOK, false, undefined, 'anthropic')?.usd).toBe(12)
  })

  it('matches a dated model id to its model and records what it matched and from where', () => {
    const c = estimateCost('claude-sonnet-4-5-20250929', MTOK, false, undefined, 'anthropic')
    expect(c).toMatchObject({ priced_as: 'anthropic/claude-sonnet-4-5', price_source: LIBRARY })
  })

  it('has no cost for a model no table prices, never zero', () => {
    expect(estimateCost('frontier-model-9', MTOK, false, undefined, 'anthropic')).toBeNull()
    expect(estimateCost(null, MTOK, false)).toBeNull()
  })

  it('lets holdfast.yaml prices win over the library, by the longest prefix', () => {
    const prices = {
      'claude-opus': { input: 1, output: 2 },
      'claude-opus-4-7': { input: 3, output: 4, cache_read: 0.5, cache_write: 6 },
    }
    const c = estimateCost('claude-opus-4-7', MTOK, false, prices, 'anthropic')
    expect(c).toEqual({
      usd: 7,
      saved_by_hold_usd: 0,
      priced_as: 'claude-opus-4-7',
      price_source: 'holdfast.yaml',
    })
  })

  it('prices cache writes and reads at their own rates and says what a held step saved', () => {
    const u: Usage = { input_tokens: 0, output_tokens: 0, cache_read_tokens: 1e6, cache_write_tokens: 1e6 }
    const c = estimateCost('claude-opus-4-7', u, true, undefined, 'anthropic')
    // $0.50 read + $6.25 write; had the reads been writes: $12.50, so the hold saved $5.75.
    expect(c?.usd).toBeCloseTo(6.75, 6)
    expect(c?.saved_by_hold_usd).toBeCloseTo(5.75, 6)
    expect(estimateCost('claude-opus-4-7', u, false, undefined, 'anthropic')?.saved_by_hold_usd).toBe(0)
  })

  it('asks the price library once when nothing was read from cache: a held step then saved nothing', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const library = require('@pydantic/genai-prices') as typeof import('@pydantic/genai-prices')
    const calls = jest.spyOn(library, 'calcPrice')
    try {
      const fresh: Usage = {
        input_tokens: 1e6,
        output_tokens: 1e6,
        cache_read_tokens: 0,
        cache_write_tokens: 1e6,
      }
      expect(estimateCost('claude-opus-4-7', fresh, true, undefined, 'anthropic')?.saved_by_hold_usd).toBe(0)
      expect(calls).toHaveBeenCalledTimes(1)
      const read: Usage = { ...fresh, cache_read_tokens: 1e6 }
      expect(
        estimateCost('claude-opus-4-7', read, true, undefined, 'anthropic')?.saved_by_hold_usd,
      ).toBeGreaterThan(0)
      expect(calls).toHaveBeenCalledTimes(3)
    } finally {
      calls.mockRestore()
    }
  })

  it('prices a step with iterations from their sum, each at the model that ran it', () => {
    const prices = { 'claude-opus': { input: 10, output: 0 }, 'claude-sonnet': { input: 1, output: 0 } }
    const usage: Usage = {
      input_tokens: 2e6,
      output_tokens: 0,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
      iterations: [
        {
          type: 'message',
          model: 'claude-opus-5',
          input_tokens: 1e6,
          output_tokens: 0,
          cache_read_tokens: 0,
          cache_write_tokens: 0,
        },
        {
          type: 'fallback_message',
          model: 'claude-sonnet-5',
          input_tokens: 1e6,
          output_tokens: 0,
          cache_read_tokens: 0,
          cache_write_tokens: 0,
        },
      ],
    }
    // Priced as the served model alone it would be $2; the declined opus iteration costs $10 of it.
    expect(estimateCost('claude-sonnet-5', usage, false, prices)).toEqual({
      usd: 11,
      saved_by_hold_usd: 0,
      priced_as: 'claude-opus + claude-sonnet',
      price_source: 'holdfast.yaml',
    })
  })

  it('leaves a step unpriced when one of its iterations ran on a model no table prices', () => {
    const usage: Usage = {
      ...MTOK,
      iterations: [
        {
          type: 'message',
          model: 'frontier-model-9',
          input_tokens: 1,
          output_tokens: 1,
          cache_read_tokens: 0,
          cache_write_tokens: 0,
        },
      ],
    }
    expect(estimateCost('claude-opus-4-7', usage, false, undefined, 'anthropic')).toBeNull()
  })

  it('prices the writes of the 1 hour lifetime at cache_write_1h where holdfast.yaml names it', () => {
    const prices = { m: { input: 1, output: 0, cache_write: 2, cache_write_1h: 4 } }
    const u: Usage = {
      input_tokens: 0,
      output_tokens: 0,
      cache_read_tokens: 0,
      cache_write_tokens: 3e6,
      cache_write_5m_tokens: 2e6,
      cache_write_1h_tokens: 1e6,
    }
    expect(estimateCost('m', u, false, prices)?.usd).toBe(8)
    expect(estimateCost('m', u, false, { m: { input: 1, output: 0, cache_write: 2 } })?.usd).toBe(6)
  })

  it('names the version of the price library that is installed', () => {
    const pkg = JSON.parse(
      fs.readFileSync(
        path.join(__dirname, '..', '..', '..', 'node_modules', '@pydantic', 'genai-prices', 'package.json'),
        'utf8',
      ),
    ) as { version: string }
    expect(LIBRARY).toBe(`genai-prices@${pkg.version}`)
  })
})

describe('answerFacts usage', () => {
  it('reads OpenAI cache writes from prompt_tokens_details.cache_write_tokens', () => {
    const body = Buffer.from(
      JSON.stringify({
        choices: [{ finish_reason: 'stop' }],
        usage: {
          prompt_tokens: 1000,
          completion_tokens: 10,
          prompt_tokens_details: { cached_tokens: 600, cache_write_tokens: 300 },
        },
      }),
    )
    expect(openai.answerFacts(body, false).usage).toEqual({
      input_tokens: 100,
      output_tokens: 10,
      cache_read_tokens: 600,
      cache_write_tokens: 300,
    })
  })
})

describe('readInsteadOfWriteUsd', () => {
  const prices = { m: { input: 3, output: 15, cache_write: 3.75, cache_read: 0.3, cache_write_1h: 6 } }

  it('prices the tokens a read kept from being a write at write − read, from the table that priced the step', () => {
    expect(readInsteadOfWriteUsd('m', 1e6, false, 'holdfast.yaml', prices)).toBe(3.45)
    expect(readInsteadOfWriteUsd('m', 1e6, true, 'holdfast.yaml', prices)).toBe(5.7)
    // Sonnet 4.5 in the library (under its long-context tier): writes $3.75, reads $0.30 per million.
    expect(readInsteadOfWriteUsd('claude-sonnet-4-5', 1e5, false, LIBRARY, {}, 'anthropic')).toBe(0.345)
  })

  it('is unknown (null, never $0) when that table has no price for the model, and $0 for no tokens', () => {
    expect(readInsteadOfWriteUsd('other', 1e6, false, 'holdfast.yaml', prices)).toBeNull()
    expect(readInsteadOfWriteUsd('frontier-model-9', 1e6, false, LIBRARY, {}, 'anthropic')).toBeNull()
    expect(readInsteadOfWriteUsd('m', 0, false, 'holdfast.yaml', prices)).toBe(0)
  })
})
