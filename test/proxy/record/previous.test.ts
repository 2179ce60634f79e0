/**
 * The previous record the hold reads (record/previous): only what the hold reads is kept, the 1 h
 * lifetime is still seen, and the agents' copies share one byte budget, least recently used first out.
 * Of the bytes only the `tools` value is kept: a held step re-sends it byte for byte.
 */
import { hold, type PreviousStep } from '../../../proxy/core/hold'
import { anthropic } from '../../../proxy/dialects'
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

describe('the bytes a kept copy holds', () => {
  // Spacing and number spellings a re-serialization would change: a held step must re-send them as they were.
  const tools =
    '[ {"name":"a","input_schema":{"type":"object","x":2.50}}, {"name":"b","input_schema":{"type":"object"}} ]'
  const transcript = [
    { role: 'user', content: 'head' },
    { role: 'assistant', content: 'x'.repeat(100_000) },
    { role: 'user', content: 'tail' },
  ]
  const recorded = Buffer.from(
    `{"model":"claude-sonnet-4-5","tools":${tools},"messages":${JSON.stringify(transcript)}}`,
  )
  const step = (bytes: Buffer): PreviousStep => ({
    path: 'request.json',
    bytes,
    parsed: JSON.parse(bytes.toString()) as PreviousStep['parsed'],
    sentAt: 0,
    headers: {},
  })

  it('are the tools value alone, and a step held against them sends exactly what it would against the whole record', () => {
    const kept = new PreviousRecords(1 << 20).remember('k', 1, step(recorded))
    expect(kept.bytes.toString()).toBe(`{"tools":${tools}}`)
    // In memory of its own: a view into Node's shared pool would keep a whole 8 KB slab per agent.
    expect(kept.bytes.buffer.byteLength).toBe(kept.bytes.length)
    const next = {
      model: 'claude-sonnet-4-5',
      tools: [{ name: 'a', input_schema: { type: 'object', x: 2.5 } }],
      messages: transcript,
    }
    const composed = { bytes: Buffer.from(JSON.stringify(next)), parsed: next, headers: {} }
    const fromKept = hold(anthropic, kept, composed, { now: 1 })
    const fromWhole = hold(anthropic, step(recorded), composed, { now: 1 })
    expect(fromKept.verdict).toMatchObject({ applied: true, held: ['b'] })
    expect(fromKept.body.equals(fromWhole.body)).toBe(true)
    expect(fromKept.body.toString()).toContain(`"tools":${tools}`)
  })

  it('count what they keep: the transcript after the head costs nothing, the rest twice its bytes for the parse', () => {
    const records = new PreviousRecords(1 << 20)
    records.remember('k', 1, step(recorded))
    const { bytes } = records.held
    expect(bytes).toBeLessThan(recorded.length / 10)
    // The kept tools bytes, and the parse of what slim kept: the record but the messages after the head.
    const afterHead = JSON.stringify(transcript).length - JSON.stringify(transcript.slice(0, 1)).length
    expect(bytes).toBe(`{"tools":${tools}}`.length + 2 * (recorded.length - afterHead))
  })

  it('are the whole record when its top level does not scan, so the hold still reports the fault', () => {
    const twice = Buffer.from('{"model":"m","tools":[{"name":"a"},{"name":"b"}],"model":"m","messages":[]}')
    const kept = new PreviousRecords(1 << 20).remember('k', 1, step(twice))
    expect(kept.bytes.equals(twice)).toBe(true)
    const next = { model: 'm', tools: [{ name: 'a' }], messages: [] }
    const composed = { bytes: Buffer.from(JSON.stringify(next)), parsed: next, headers: {} }
    expect(hold(anthropic, kept, composed, { now: 1 }).verdict.reason).toBe('record-fault')
  })
})
