/**
 * scripts/check-figures.js: measured figures stay out of code comments (they live in
 * docs/performance.md and docs/benchmarks.md with their commands). Checked on small sources here,
 * and on this repository.
 */
import path from 'node:path'

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { check, figuresIn } = require('../../scripts/check-figures.js') as {
  check: (root: string) => { file: string; line: number; figure: string }[]
  figuresIn: (
    rel: string,
    text: string,
    allowed?: Record<string, string[]>,
  ) => { file: string; line: number; figure: string }[]
}

describe('a figure in a comment', () => {
  it('is refused in a line comment and in a block comment, with its line', () => {
    const src = [
      'const a = 1 // took 12.5 ms here',
      '/**',
      ' * 40 MB after the bench,',
      ' * 4.3× faster',
      ' */',
    ].join('\n')
    expect(figuresIn('proxy/x.ts', src).map((f) => [f.line, f.figure])).toEqual([
      [1, '12.5 ms'],
      [3, '40 MB'],
      [4, '4.3×'],
    ])
  })

  it('is not looked for in strings or code, only in comments', () => {
    const src = "const msg = 'waited 30 ms' // a plain comment\nconst t = `1 MB ${x}`"
    expect(figuresIn('proxy/x.ts', src)).toEqual([])
  })

  it('passes when the allow-list names that phrase in that file', () => {
    const src = '/** The largest form the view accepts (256 KB). */'
    expect(figuresIn('proxy/view/form.ts', src, { 'proxy/view/form.ts': ['(256 KB)'] })).toEqual([])
    expect(figuresIn('proxy/view/other.ts', src, { 'proxy/view/form.ts': ['(256 KB)'] })).toHaveLength(1)
  })
})

describe('this repository', () => {
  it('has no measured figure in a code comment', () => {
    expect(check(path.join(__dirname, '..', '..'))).toEqual([])
  })
})
