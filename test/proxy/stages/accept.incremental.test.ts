/**
 * accept with the agents' read cache: a request that extends the agent's last one is read on its
 * facts and gives what a read of the whole gives (value, scan, the plugins' view), a refusal in
 * the new tail is refused in the same words, and `count_tokens` neither reads nor leaves facts.
 */
import { isDeepStrictEqual } from 'node:util'
import { HoldfastError } from '../../../proxy/core/errors'
import type { Json } from '../../../proxy/core/json'
import { anthropic } from '../../../proxy/dialects'
import { ReadCache } from '../../../proxy/live/read-cache'
import { accept, type Incoming } from '../../../proxy/stages/accept'
import { Conversation } from '../../support/conversation'

const incoming = (kind: Incoming['kind'] = 'step'): Incoming => ({
  kind,
  dialect: anthropic,
  path: '/v1/messages',
  workspace: 'ws',
  agent: 'main',
  headers: {},
  tokenCarried: false,
  body: () => Promise.reject(new Error('not read here')),
})

const refusal = (f: () => unknown): string => {
  try {
    f()
  } catch (err) {
    return `${(err as HoldfastError).code}: ${(err as Error).message}`
  }
  return 'accepted'
}

test('a request extending the last one is accepted on its facts, the same as read whole', () => {
  const reads = new ReadCache(64 * 1024 * 1024)
  const c = new Conversation(3)
  let last
  for (let i = 0; i < 12; i++) {
    const raw = c.next()
    const cached = accept(incoming(), raw, reads)
    const whole = accept(incoming(), raw)
    expect(isDeepStrictEqual(cached.parsed, whole.parsed)).toBe(true)
    expect([...cached.top.keys]).toEqual([...whole.top.keys])
    expect(isDeepStrictEqual(cached.facts.body, whole.facts.body)).toBe(true)
    // The facts kept are this request's: the next one reads on them.
    expect(reads.nearest('ws\0main', raw)?.facts.bytes).toBe(raw)
    if (last) expect(cached.parsed.tools).toBe(last.parsed.tools)
    last = cached
  }
})

test('a refusal in the new tail is the same refusal, in the same words, and keeps the last facts', () => {
  const reads = new ReadCache(64 * 1024 * 1024)
  const c = new Conversation(4)
  const first = c.next()
  accept(incoming(), first, reads)
  const body = JSON.parse(first.toString('utf8')) as { messages: Json[] }
  body.messages.push({ role: 'user', content: 7 })
  const bad = Buffer.from(JSON.stringify(body))
  const cached = refusal(() => accept(incoming(), bad, reads))
  expect(cached).toMatch(/^BAD_FIELD: the request is refused: /)
  expect(cached).toBe(refusal(() => accept(incoming(), bad)))
  expect(reads.nearest('ws\0main', first)?.facts.bytes).toBe(first)
})

test('side requests to the same address (a title, a subagent) do not cost the main conversation its tail read', () => {
  const reads = new ReadCache(64 * 1024 * 1024)
  const main = new Conversation(6)
  const sub = new Conversation(8)
  let last = accept(incoming(), main.next(), reads)
  for (let i = 0; i < 6; i++) {
    accept(incoming(), sub.next(), reads)
    accept(
      incoming(),
      Buffer.from(
        JSON.stringify({ model: 'm', max_tokens: 8, messages: [{ role: 'user', content: `title ${i}` }] }),
      ),
      reads,
    )
    const next = accept(incoming(), main.next(), reads)
    // Read on the main conversation's own last facts: its tools are the same value, not a copy.
    expect(next.previousRead?.bytes).toBe(last.raw)
    expect(next.parsed.tools).toBe(last.parsed.tools)
    last = next
  }
})

test('count_tokens neither reads on nor leaves an agent its facts', () => {
  const reads = new ReadCache(64 * 1024 * 1024)
  const raw = new Conversation(5).next()
  accept(incoming('count_tokens'), raw, reads)
  expect(reads.held.agents).toBe(0)
})
