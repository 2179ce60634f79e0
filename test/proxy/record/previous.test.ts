/**
 * The previous record the hold reads (record/previous): only what the hold reads is kept, the 1 h
 * lifetime is still seen, and the agents' copies share one byte budget, least recently used first out.
 */
import type { PreviousStep } from '../../../proxy/core/hold'
import { PreviousRecords, slim } from '../../../proxy/record/previous'

const messages = [
  { role: 'system', content: 's' },
  { role: 'user', content: 'head' },
  { role: 'assistant', content: 'a' },
  {
    role: 'user',
    content: [{ type: 'text', text: 'tail', cache_control: { type: 'ephemeral', ttl: '1h' } }],
  },
]

/** A previous request of `size` bytes (it costs 3× that in memory). */
const previous = (size: number): PreviousStep => ({
  path: '/nonexistent/request.json',
  bytes: Buffer.alloc(size),
  parsed: {},
  sentAt: 0,
  headers: {},
})

describe('the previous record kept per agent', () => {
  it('keeps the top-level fields, the system messages and the head, and drops the rest of the transcript', () => {
    const body = { model: 'm', tools: [{ name: 't' }], messages }
    expect(slim(body)).toEqual({ model: 'm', tools: [{ name: 't' }], messages: messages.slice(0, 2) })
    expect(slim({ model: 'm', messages: messages.slice(0, 1) }).messages).toHaveLength(1)
  })

  it('still knows the request asked for the 1 h cache lifetime when the marker was on a dropped message', () => {
    const records = new PreviousRecords(1 << 20)
    const body = { model: 'm', messages }
    const kept = records.remember('w\0a', 1, {
      ...previous(10),
      bytes: Buffer.from(JSON.stringify(body)),
      parsed: body,
    })
    expect(kept.longTtl).toBe(true)
    expect((kept.parsed.messages as unknown[]).length).toBe(2)
    expect(records.get('w\0a', 1)).toBe(kept)
  })

  it('gives back only the step it holds', () => {
    const records = new PreviousRecords(1 << 20)
    records.remember('k', 4, previous(10))
    expect(records.get('k', 3)).toBeUndefined()
    expect(records.get('k', 4)).toBeDefined()
    expect(records.get('other', 4)).toBeUndefined()
  })
})

describe('the byte budget of the previous records', () => {
  it('drops the least recently used copies past its budget and keeps the one just used', () => {
    const records = new PreviousRecords(250)
    records.remember('a', 1, previous(40))
    records.remember('b', 1, previous(40))
    records.answered('a', 1, 200)
    records.remember('a', 2, previous(40)) // a used again: b is now the oldest
    records.remember('c', 1, previous(40))
    expect(records.held).toEqual({ bytes: 240, agents: 2 })
    expect(records.has('b')).toBe(false)
    expect(records.has('a')).toBe(true)
    expect(records.has('c')).toBe(true)
  })

  it('keeps a request read as a view into a larger buffer in memory of its own (it must not pin the socket read)', () => {
    const records = new PreviousRecords(1 << 20)
    const socketRead = Buffer.alloc(64 * 1024)
    const kept = records.remember('a', 1, { ...previous(0), bytes: socketRead.subarray(100, 1100) })
    expect(kept.bytes.length).toBe(1000)
    expect(kept.bytes.buffer.byteLength).toBe(1000)
  })

  it('keeps no copy larger than the whole budget', () => {
    const records = new PreviousRecords(10)
    records.remember('a', 1, previous(11))
    expect(records.has('a')).toBe(false)
    expect(records.held).toEqual({ bytes: 0, agents: 0 })
  })
})
