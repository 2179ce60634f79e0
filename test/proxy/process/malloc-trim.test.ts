import { mallocTrim } from '../../../proxy/process/malloc-trim'

describe('mallocTrim', () => {
  it('reaches glibc’s malloc_trim on Linux, which runs and says whether it gave memory back', () => {
    const trim = mallocTrim()
    expect(typeof trim).toBe('function')
    expect(typeof trim?.()).toBe('boolean')
  })

  it('is absent where there is no glibc, rather than an error', () => {
    expect(mallocTrim('darwin')).toBeUndefined()
    expect(mallocTrim('win32')).toBeUndefined()
  })
})
