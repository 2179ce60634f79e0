/**
 * What a socket shares: the conversations it can continue (the latest few), and the frame sent
 * for what the stages decided (the client's bytes unless a field changed, and then only that field).
 */
import { Conversations, frameFor } from '../../../proxy/socket/site'

const conv = (n: number) => ({ items: [n], itemBytes: [Buffer.from(String(n))], tools: undefined })

describe('a socket’s conversations', () => {
  it('keeps the latest eight, the oldest forgotten first', () => {
    const c = new Conversations()
    for (let i = 1; i <= 10; i++) c.set(`r${i}`, conv(i))
    expect(c.get('r1')).toBeUndefined()
    expect(c.get('r2')).toBeUndefined()
    expect(c.get('r3')).toEqual(conv(3))
    expect(c.get('r10')).toEqual(conv(10))
  })

  it('counts a conversation set again as the latest', () => {
    const c = new Conversations()
    for (let i = 1; i <= 8; i++) c.set(`r${i}`, conv(i))
    c.set('r1', conv(1))
    c.set('r9', conv(9))
    expect(c.get('r1')).toEqual(conv(1))
    expect(c.get('r2')).toBeUndefined()
  })
})

describe('the frame sent', () => {
  const frame = Buffer.from(
    '{"type":"response.create","model":"m", "tools":[{"name":"a"}],"input":[{"x":1}]}',
  )
  const whole = { model: 'm', tools: [{ name: 'a' }], input: [{ x: 0 }, { x: 1 }] }

  it('is the client’s own buffer when the stages changed nothing', () => {
    expect(frameFor(frame, whole, { ...whole })).toBe(frame)
  })

  it('carries a changed field, every other byte as the client sent it', () => {
    const held = { ...whole, tools: [{ name: 'a' }, { name: 'b' }], prompt_cache_key: 'w/a' }
    expect(frameFor(frame, whole, held).toString()).toBe(
      '{"type":"response.create","model":"m", "tools":[{"name":"a"},{"name":"b"}],"input":[{"x":1}],"prompt_cache_key":"w/a"}',
    )
  })

  it('never carries the whole input, only the frame’s own', () => {
    expect(frameFor(frame, whole, { ...whole, input: [{ y: 1 }] })).toBe(frame)
  })
})
