import { once, onFirstUse } from '../../../proxy/core/once'

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

describe('onFirstUse', () => {
  it('finds the function at the first call only, then calls it on every call', () => {
    let finds = 0
    let calls = 0
    const f = onFirstUse(() => {
      finds++
      return () => ++calls
    })
    expect(finds).toBe(0)
    expect([f(), f(), f()]).toEqual([1, 2, 3])
    expect(finds).toBe(1)
  })

  it('gives undefined on every call where nothing was found, and looks only once', () => {
    let finds = 0
    const f = onFirstUse<number>(() => {
      finds++
      return undefined
    })
    expect([f(), f()]).toEqual([undefined, undefined])
    expect(finds).toBe(1)
  })
})
