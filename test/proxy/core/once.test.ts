import { once } from '../../../proxy/core/once'

describe('once', () => {
  it('makes the value at the first call only, and gives the same value after, undefined included', () => {
    let made = 0
    const value = once(() => ++made)
    expect(made).toBe(0)
    expect([value(), value(), value()]).toEqual([1, 1, 1])
    let calls = 0
    const nothing = once(() => {
      calls++
      return undefined
    })
    nothing()
    nothing()
    expect(calls).toBe(1)
  })
})
