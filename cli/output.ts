/**
 * Command output: aligned tables for people, JSON for programs (`--json`), and the one error
 * line a refused command prints. Invariant: a command's result goes to stdout, diagnostics to
 * stderr; a failing command exits non-zero with one sentence.
 */

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message)
    this.name = 'CliError'
  }
}

/** Columns padded to their widest cell; numbers (and `-`) right-aligned. */
export function table(headers: string[], rows: (string | number | null | undefined)[][]): string {
  const cells = rows.map((r) => r.map((c) => (c === null || c === undefined ? '-' : String(c))))
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => (r[i] ?? '').length)))
  const numeric = headers.map(
    (_, i) => cells.length > 0 && cells.every((r) => /^(-|[-+$]?[\d.,]+(ms|%)?)$/.test(r[i] ?? '')),
  )
  const line = (r: string[]): string =>
    r
      .map((c, i) => (numeric[i] ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd()
  return [line(headers), ...cells.map(line)].join('\n') + '\n'
}

export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n')
}

export const fmtInt = (n: number | null | undefined): string =>
  n === null || n === undefined ? '-' : String(n)
export { fmtUsd } from '../proxy/core/saving-words'
export const fmtMs = (n: number | null | undefined): string =>
  n === null || n === undefined ? '-' : n >= 10_000 ? `${(n / 1000).toFixed(1)}s` : `${Math.round(n)}ms`
