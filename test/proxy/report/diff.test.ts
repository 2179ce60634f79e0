/**
 * report/diff: what changed between two requests, as a person reads a miss — messages added or the
 * transcript rewritten, tools added/removed/edited/reordered, the system line by line, other
 * fields and headers — with cache_control markers ignored as the hold ignores them.
 */
import { anthropic, openai } from '../../../proxy/dialects'
import { lineDiff, stepDiff } from '../../../proxy/report/diff'

const tool = (name: string, description = name) => ({ name, description, input_schema: { type: 'object' } })
const req = (over: Record<string, unknown> = {}) => ({
  model: 'm',
  max_tokens: 10,
  system: 'one\ntwo\nthree',
  tools: [tool('a'), tool('b'), tool('c')],
  messages: [{ role: 'user', content: 'hi' }],
  ...over,
})

describe('lineDiff', () => {
  it('keeps common lines and marks added and deleted ones', () => {
    expect(lineDiff('a\nb\nc', 'a\nB\nc')).toEqual([
      { op: 'same', text: 'a' },
      { op: 'add', text: 'B' },
      { op: 'del', text: 'b' },
      { op: 'same', text: 'c' },
    ])
  })

  it('gives up (null) on texts too long to compare line by line', () => {
    const a = Array.from({ length: 3000 }, (_, i) => `a${i}`).join('\n')
    const b = Array.from({ length: 3000 }, (_, i) => `b${i}`).join('\n')
    expect(lineDiff(a, b)).toBeNull()
  })
})

describe('stepDiff', () => {
  it('says a grown conversation is messages added, and nothing else moved', () => {
    const cur = req({
      messages: [
        // A string content and one text block are the same message to the cache.
        { role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } }] },
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: 'more' },
      ],
    })
    const d = stepDiff(anthropic, req(), cur, {}, {})
    expect(d.messages).toEqual({ previous: 1, current: 3, common: 1, added: 2, rewrittenFrom: null })
    expect(d.tools).toMatchObject({ added: [], removed: [], edited: [], reordered: false })
    expect([d.model, d.system.changed, d.fields, d.headers]).toEqual([null, false, [], []])
  })

  it('names tools added, removed, edited and reordered, the system lines, the model, fields and headers', () => {
    const cur = req({
      model: 'm2',
      max_tokens: 20,
      system: 'one\nTWO\nthree',
      tools: [tool('c'), tool('a', 'edited'), tool('d')],
      messages: [{ role: 'user', content: 'hello' }],
    })
    const d = stepDiff(
      anthropic,
      req(),
      cur,
      { 'x-a': '1', 'content-length': '5' },
      { 'x-a': '2', 'content-length': '9' },
    )
    expect(d.model).toEqual({ from: 'm', to: 'm2' })
    expect(d.tools).toEqual({
      previous: 3,
      current: 3,
      added: ['d'],
      removed: ['b'],
      edited: ['a'],
      reordered: true,
    })
    expect(d.messages.rewrittenFrom).toBe(0)
    expect(d.system.changed).toBe(true)
    expect(d.system.lines?.filter((l) => l.op !== 'same').map((l) => l.text)).toEqual(['TWO', 'two'])
    expect(d.fields).toEqual(['max_tokens'])
    expect(d.headers).toEqual([{ name: 'x-a', from: '1', to: '2' }])
  })

  it('reads openai’s system messages as the system, not as the transcript', () => {
    const prev = {
      model: 'g',
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'q' },
      ],
    }
    const cur = {
      model: 'g',
      messages: [
        { role: 'system', content: 'sys 2' },
        { role: 'user', content: 'q' },
      ],
    }
    const d = stepDiff(openai, prev, cur, {}, {})
    expect(d.system.changed).toBe(true)
    expect(d.messages).toMatchObject({ previous: 1, current: 1, added: 0, rewrittenFrom: null })
  })
})
