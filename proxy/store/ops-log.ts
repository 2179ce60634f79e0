/**
 * The ops log, `<home>/ops.jsonl`: one appended row per dispatch, `{ts, argv, cwd, exit, origin,
 * stdout, stderr}`. Invariant: rows are only appended (one `write` each, so concurrent writers
 * never interleave) and never rewritten; a row is at most 4096 bytes, longer fields are cut and
 * named in `truncated`.
 */
import fs from 'node:fs'
import path from 'node:path'
import { homePaths } from './home'

export type Origin = 'cli' | 'hook' | 'http'

export interface OpsRow {
  ts: string
  argv: string[]
  cwd: string
  exit: number
  origin: Origin
  stdout: string
  stderr: string
  truncated?: string[]
}

export const MAX_ROW_BYTES = 4096

/** The row as one JSON line of at most MAX_ROW_BYTES, cutting stdout, stderr, then argv entries. */
export function opsLine(row: OpsRow): string {
  const r: OpsRow = { ...row, argv: [...row.argv] }
  const size = (): number => Buffer.byteLength(JSON.stringify(r)) + 1
  /** `s` cut to at most `bytes` bytes (never negative), marked with an ellipsis. */
  const cut = (s: string, bytes: number): string => {
    const limit = Math.max(0, bytes)
    let out = s.slice(0, limit)
    while (out.length > 0 && Buffer.byteLength(out) > limit) out = out.slice(0, Math.floor(out.length * 0.9))
    return out + '…'
  }
  const mark = (field: string): void => {
    r.truncated = [...new Set([...(r.truncated ?? []), field])]
  }
  // Cut the largest field first (a long goal before the child id on stdout), until the row fits.
  for (let guard = 0; size() > MAX_ROW_BYTES && guard < 64; guard++) {
    const fields: { name: string; bytes: number; get: () => string; set: (v: string) => void }[] = [
      { name: 'stdout', bytes: Buffer.byteLength(r.stdout), get: () => r.stdout, set: (v) => (r.stdout = v) },
      { name: 'stderr', bytes: Buffer.byteLength(r.stderr), get: () => r.stderr, set: (v) => (r.stderr = v) },
      ...r.argv.map((a, i) => ({
        name: `argv[${i}]`,
        bytes: Buffer.byteLength(a),
        get: () => r.argv[i] as string,
        set: (v: string) => (r.argv[i] = v),
      })),
    ]
    const biggest = fields.sort((a, b) => b.bytes - a.bytes)[0]
    if (!biggest || biggest.bytes <= 16) break
    biggest.set(cut(biggest.get(), biggest.bytes - (size() - MAX_ROW_BYTES) - 16))
    mark(biggest.name)
  }
  return JSON.stringify(r) + '\n'
}

export function appendOps(home: string, row: OpsRow): void {
  const file = homePaths.opsLog(home)
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.appendFileSync(file, opsLine(row), { mode: 0o600 })
}

export function readOps(home: string): OpsRow[] {
  try {
    return fs
      .readFileSync(homePaths.opsLog(home), 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as OpsRow)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw err
  }
}
