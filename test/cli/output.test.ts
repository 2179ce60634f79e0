/**
 * cli/output: the one error a refused command throws (CliError, exit 1 unless told), aligned
 * tables (every column padded to its widest cell, all-number columns right-aligned, a missing cell
 * as `-`), JSON on stdout, and the number formats of tokens, dollars and latencies.
 */
import { CliError, fmtInt, fmtMs, fmtUsd, printJson, table } from '../../cli/output'

describe('CliError', () => {
  it('exits 1 unless given another code, and carries the sentence as its message', () => {
    const plain = new CliError('no workspace "x"')
    expect(plain).toBeInstanceOf(Error)
    expect([plain.name, plain.message, plain.exitCode]).toEqual(['CliError', 'no workspace "x"', 1])
    expect(new CliError('dispatcher failed', 3).exitCode).toBe(3)
  })
})

describe('table', () => {
  it('pads every column to its widest cell, right-aligns all-number columns and trims line ends', () => {
    const text = table(
      ['name', 'tokens', 'cost', 'note'],
      [
        ['main', 1234, '$0.0012', 'long note here'],
        ['main.sub-ab12', 5, '$10.50', ''],
      ],
    )
    expect(text.split('\n')).toEqual([
      'name           tokens     cost  note',
      'main             1234  $0.0012  long note here',
      'main.sub-ab12       5   $10.50',
      '',
    ])
  })

  it('shows a missing cell as "-", which keeps a number column numeric', () => {
    const text = table(
      ['step', 'ms'],
      [
        ['001', null],
        ['002', 15],
        ['003', undefined],
      ],
    )
    // Every cell of both columns is a number or "-": both right-aligned.
    expect(text).toBe('step  ms\n 001   -\n 002  15\n 003   -\n')
  })

  it('left-aligns a column as soon as one cell is not a number, and a header alone is not numeric', () => {
    expect(
      table(
        ['model', 'n'],
        [
          ['m1', 7],
          ['12', 100],
        ],
      ),
    ).toBe('model    n\nm1       7\n12     100\n')
    expect(table(['a', 'bb'], [])).toBe('a  bb\n')
  })
})

describe('printJson', () => {
  it('writes two-space indented JSON and a newline to stdout', () => {
    const out: string[] = []
    const spy = jest.spyOn(process.stdout, 'write').mockImplementation((c: string | Uint8Array) => {
      out.push(String(c))
      return true
    })
    try {
      printJson({ a: [1], b: null })
    } finally {
      spy.mockRestore()
    }
    expect(out.join('')).toBe('{\n  "a": [\n    1\n  ],\n  "b": null\n}\n')
  })
})

describe('number formats', () => {
  it('prints an unknown value as "-" in every format, and zero as a value', () => {
    for (const f of [fmtInt, fmtUsd, fmtMs]) {
      expect(f(null)).toBe('-')
      expect(f(undefined)).toBe('-')
    }
    expect([fmtInt(0), fmtUsd(0), fmtMs(0)]).toEqual(['0', '$0.00', '0ms'])
  })

  it('gives cents to dollars, and four decimals to a non-zero amount under a cent', () => {
    expect(fmtUsd(1.5)).toBe('$1.50')
    expect(fmtUsd(0.01)).toBe('$0.01')
    expect(fmtUsd(0.0042)).toBe('$0.0042')
  })

  it('rounds latencies to whole milliseconds under ten seconds and to tenths of a second from ten', () => {
    expect(fmtMs(12.6)).toBe('13ms')
    expect(fmtMs(9999)).toBe('9999ms')
    expect(fmtMs(10_000)).toBe('10.0s')
    expect(fmtMs(61_449)).toBe('61.4s')
  })
})
