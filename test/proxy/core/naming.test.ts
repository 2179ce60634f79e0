import { HoldfastError } from '../../../proxy/core/errors'
import {
  assertName,
  checkName,
  compareSteps,
  formatStep,
  isCallable,
  isComponent,
  isRefComponent,
  parseStep,
} from '../../../proxy/core/naming'

describe('path components', () => {
  it.each(['', '.', '..', 'a/b', '/', 'a\\b', '\\', 'a\0b'])('refuses %j as a path component', (s) => {
    expect(isComponent(s)).toBe(false)
  })

  it.each(['main', 'a.b', '...', 'a b', '-x', '.x', 'a..b'])('accepts %j as a path component', (s) => {
    expect(isComponent(s)).toBe(true)
  })
})

describe('ref components', () => {
  it.each([
    'a.lock',
    'a..b',
    '@',
    '-x',
    '.x',
    'a b',
    'a~b',
    'a@{b',
    'a^b',
    'a:b',
    'a?b',
    'a*b',
    'a[b',
    'a.',
    'a\tb',
    'a\x7fb',
  ])('refuses %j as a git ref component', (s) => {
    expect(isRefComponent(s)).toBe(false)
  })

  it.each(['', '.', '..', 'a/b', 'a\\b', 'a\0b'])('refuses %j, which is not even a path component', (s) => {
    expect(isRefComponent(s)).toBe(false)
  })

  it.each(['main', 'a.b', 'a-b', 'a_b', 'a@b', 'lock', 'a.locks', 'x-'])(
    'accepts %j as a git ref component',
    (s) => {
      expect(isRefComponent(s)).toBe(true)
    },
  )
})

describe('callable tool names', () => {
  it('accepts a name of 64 characters', () => {
    expect(isCallable('a'.repeat(64))).toBe(true)
  })

  it('refuses a name of 65 characters', () => {
    expect(isCallable('a'.repeat(65))).toBe(false)
  })

  it('refuses the empty name', () => {
    expect(isCallable('')).toBe(false)
  })

  it('accepts ASCII letters, digits, underscore and hyphen', () => {
    expect(isCallable('laptop_Bash-2')).toBe(true)
  })

  it.each(['laptop.local_Bash', 'a b', 'a/b', 'naïve', 'a:b'])('refuses %j', (s) => {
    expect(isCallable(s)).toBe(false)
  })
})

describe('checkName', () => {
  it('answers undefined for a usable name', () => {
    expect(checkName('agent', 'main')).toBeUndefined()
  })

  it('names the value when it is not a path component', () => {
    const problem = checkName('workspace', 'a/b')
    expect(problem).toContain('workspace name "a/b"')
    expect(problem).toContain('path component')
  })

  it('names the value when it is a path component but not a ref component', () => {
    const problem = checkName('agent', 'x.lock')
    expect(problem).toContain('agent name "x.lock"')
    expect(problem).toContain('git ref component')
  })

  it('holds a tool name only to the path-component rule', () => {
    expect(checkName('tool', 'a.lock')).toBeUndefined()
    expect(checkName('tool', '..')).toContain('tool name ".."')
  })
})

describe('assertName', () => {
  it('returns a usable name unchanged', () => {
    expect(assertName('client', 'laptop')).toBe('laptop')
  })

  it('throws a HoldfastError with code BAD_NAME carrying the sentence that names the value', () => {
    let caught: unknown
    try {
      assertName('agent', '..')
    } catch (err) {
      caught = err
    }
    expect(caught).toBeInstanceOf(HoldfastError)
    expect((caught as HoldfastError).code).toBe('BAD_NAME')
    expect((caught as HoldfastError).status).toBe(400)
    expect((caught as HoldfastError).message).toBe(checkName('agent', '..'))
  })
})

describe('step numbers', () => {
  it('pads to three digits and no further', () => {
    expect(formatStep(1)).toBe('001')
    expect(formatStep(999)).toBe('999')
    expect(formatStep(1000)).toBe('1000')
  })

  it.each([0, -1, 1.5, Number.NaN])('refuses to format %p', (n) => {
    expect(() => formatStep(n)).toThrow(RangeError)
  })

  it('parses canonical step names', () => {
    expect(parseStep('001')).toBe(1)
    expect(parseStep('999')).toBe(999)
    expect(parseStep('1000')).toBe(1000)
  })

  it.each(['1', '01', '0001', '000', 'abc', '', '01000', '-01', '1e3'])('refuses %j as a step name', (s) => {
    expect(parseStep(s)).toBeUndefined()
  })

  it('sorts step names numerically, 999 before 1000', () => {
    expect(['1000', '999', '001'].sort(compareSteps)).toEqual(['001', '999', '1000'])
  })
})
