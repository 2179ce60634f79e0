/**
 * plugins/decisions.ts: the answers of the deciding hooks, checked. `identify` may answer
 * {workspace?, agent?, why?, compaction?}, `route` {role?, provider?, model?, why?}, or nothing; a malformed
 * answer fails closed as PLUGIN_FAILED naming the plugin and the hook; names that become paths and
 * refs (workspace, agent, role) are checked; an answer with only `why` is no answer.
 */
import { checkIdentify, checkRoute } from '../../plugins/decisions'
import { HoldfastError } from '../../proxy/core/errors'

/** The refusal `fn` throws: its code and message (fails the test when it does not throw). */
function refusal(fn: () => unknown): { code: string; message: string } {
  try {
    fn()
  } catch (err) {
    expect(err).toBeInstanceOf(HoldfastError)
    return { code: (err as HoldfastError).code, message: (err as Error).message }
  }
  throw new Error('expected a refusal')
}

describe('no answer', () => {
  it('treats undefined, null, an empty object and an object with only undefined fields as no answer', () => {
    for (const v of [undefined, null, {}, { agent: undefined, workspace: undefined }]) {
      expect(checkIdentify('p', v)).toBeUndefined()
      expect(checkRoute('p', v)).toBeUndefined()
    }
  })

  it('treats an answer that gives only a reason (why) as no answer, so the next plugin decides', () => {
    expect(checkIdentify('p', { why: 'just saying' })).toBeUndefined()
    expect(checkRoute('p', { why: 'just saying' })).toBeUndefined()
  })
})

describe('a well-formed answer', () => {
  it('is returned with its fields, undefined ones dropped and the reason kept', () => {
    expect(checkIdentify('p', { agent: 'reviewer', workspace: undefined, why: 'a review' })).toEqual({
      agent: 'reviewer',
      why: 'a review',
    })
    expect(checkRoute('p', { role: 'long', provider: 'anthropic', model: 'm-1', why: 'big' })).toEqual({
      role: 'long',
      provider: 'anthropic',
      model: 'm-1',
      why: 'big',
    })
  })

  it('takes a compaction mark alone as an answer, or beside a move', () => {
    const compaction = { kind: 'request', via: 'its header' }
    expect(checkIdentify('p', { compaction })).toEqual({ compaction })
    expect(checkIdentify('p', { agent: 'main', compaction: { kind: 'after', via: 'x' } })).toEqual({
      agent: 'main',
      compaction: { kind: 'after', via: 'x' },
    })
  })

  it('refuses a compaction mark of another shape, naming the one it takes', () => {
    for (const bad of [
      'request',
      { kind: 'before', via: 'x' },
      { kind: 'after' },
      { kind: 'after', via: 'x', n: 1 },
    ])
      expect(refusal(() => checkIdentify('p', { compaction: bad })).message).toMatch(
        /^plugin p \(identify\) returned compaction .*; expected \{kind: "request"\|"after", via: string\}$/,
      )
  })

  it('does not check a model as a name: a model id may hold "/" and ":" (it never becomes a path)', () => {
    expect(checkRoute('p', { model: 'openai/gpt-5:latest' })).toEqual({ model: 'openai/gpt-5:latest' })
  })
})

describe('a malformed answer fails closed', () => {
  it('refuses a value that is not an object, naming the plugin, the hook and the expected shape', () => {
    expect(refusal(() => checkIdentify('tagger', 'main'))).toEqual({
      code: 'PLUGIN_FAILED',
      message: 'plugin tagger (identify) returned "main"; expected {workspace?, agent?, why?} or nothing',
    })
    expect(refusal(() => checkRoute('router', ['long'])).message).toBe(
      'plugin router (route) returned ["long"]; expected {role?, provider?, model?, why?} or nothing',
    )
    expect(refusal(() => checkRoute('router', 7)).code).toBe('PLUGIN_FAILED')
  })

  it("refuses a key the hook does not answer with, even one the other hook knows (route's model in identify)", () => {
    expect(refusal(() => checkIdentify('p', { agnet: 'x' })).message).toBe(
      'plugin p (identify) returned an unknown key "agnet"; expected {workspace?, agent?, why?} or nothing',
    )
    expect(refusal(() => checkIdentify('p', { model: 'm' })).message).toMatch(/unknown key "model"/)
    expect(refusal(() => checkRoute('p', { agent: 'a' })).message).toMatch(
      /^plugin p \(route\) returned an unknown key "agent"/,
    )
  })

  it('refuses a field that is not a non-empty string (an empty string, a number, null), the reason included', () => {
    expect(refusal(() => checkIdentify('p', { agent: '' })).message).toBe(
      'plugin p (identify) returned agent ""; expected a non-empty string',
    )
    expect(refusal(() => checkRoute('p', { model: 4 })).message).toBe(
      'plugin p (route) returned model 4; expected a non-empty string',
    )
    expect(refusal(() => checkRoute('p', { model: 'm', why: null })).message).toMatch(/returned why null/)
  })

  it('refuses a workspace, agent or role that is not a usable path and git ref component', () => {
    const bad = [
      () => checkIdentify('p', { workspace: '../up' }),
      () => checkIdentify('p', { agent: 'has space' }),
      () => checkIdentify('p', { agent: 'x'.repeat(101) }),
      () => checkRoute('p', { role: 'a/b' }),
    ]
    const messages = bad.map((f) => refusal(f).message)
    expect(messages[0]).toMatch(/^plugin p \(identify\) returned a bad workspace: workspace name "\.\.\/up"/)
    expect(messages[1]).toMatch(/^plugin p \(identify\) returned a bad agent: .*git ref component/)
    expect(messages[2]).toMatch(/is 101 bytes long: a name is at most 100 bytes/)
    expect(messages[3]).toMatch(/^plugin p \(route\) returned a bad role: role name "a\/b" is not usable/)
  })
})
