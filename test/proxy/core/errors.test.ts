/** The error table in code and the one in docs/errors.md are the same table. */
import fs from 'node:fs'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import { ERROR_CODES, HoldfastError, RECORDED_CODES } from '../../../proxy/core/errors'

const doc = fs.readFileSync(path.join(__dirname, '..', '..', '..', 'docs', 'errors.md'), 'utf8')
// Cells may be padded (prettier aligns the table).
const rows = [...doc.matchAll(/^\| +`([A-Z_]+)` +\| +(\d+) +\| +`([a-z_]+)` +\| +(.+?) +\|$/gm)].map((m) => ({
  code: m[1],
  status: Number(m[2]),
  type: m[3],
  meaning: m[4],
}))

const ROOT = path.join(__dirname, '..', '..', '..')
const recordedRows = [...doc.matchAll(/^\| +`([A-Z_]+)` +\| +([^|]+?) +\|$/gm)].map((m) => ({
  code: m[1],
  meaning: m[2],
}))

describe('the error table', () => {
  it('documents every code recorded in meta.json, and nothing else', () => {
    expect(recordedRows).toEqual(Object.entries(RECORDED_CODES).map(([code, meaning]) => ({ code, meaning })))
  })

  it('holds every code the source gives an error (answers, meta.json outcomes, onError)', () => {
    const files = execFileSync(
      'git',
      ['ls-files', '-co', '--exclude-standard', 'proxy', 'hooks', 'cli', 'plugins'],
      {
        cwd: ROOT,
        encoding: 'utf8',
      },
    )
      .split('\n')
      .filter((f) => f.endsWith('.ts'))
    const used = new Set<string>()
    for (const f of files) {
      const text = fs.readFileSync(path.join(ROOT, f), 'utf8')
      for (const m of text.matchAll(/(?:HoldfastError\(|\bcode: )'([A-Z_]+)'/g)) used.add(m[1] as string)
    }
    expect(used.size).toBeGreaterThan(20)
    const known = new Set([...Object.keys(ERROR_CODES), ...Object.keys(RECORDED_CODES)])
    expect([...used].filter((c) => !known.has(c))).toEqual([])
  })

  it('documents every code with its status, type and meaning, and nothing else', () => {
    expect(rows).toEqual(
      Object.entries(ERROR_CODES).map(([code, v]) => ({
        code,
        status: v.status,
        type: v.type,
        meaning: v.meaning,
      })),
    )
  })

  it('gives a client-fault status only to faults a changed request would fix', () => {
    const clientFaults = Object.entries(ERROR_CODES)
      .filter(([, v]) => v.status >= 400 && v.status < 500)
      .map(([k]) => k)
    for (const code of clientFaults)
      expect(ERROR_CODES[code as keyof typeof ERROR_CODES].type).not.toBe('api_error')
    for (const code of [
      'RECORD_WRITE_FAILED',
      'INTERNAL',
      'NO_PROVIDER_ROW',
      'PROVIDER_KEY_MISSING',
    ] as const) {
      expect(ERROR_CODES[code].status).toBeGreaterThanOrEqual(500)
    }
  })

  it('carries its code and status on a HoldfastError and chains the cause', () => {
    const cause = new Error('disk full')
    const e = new HoldfastError('RECORD_WRITE_FAILED', 'could not write', { cause })
    expect([e.code, e.status, e.cause]).toEqual(['RECORD_WRITE_FAILED', 500, cause])
  })
})
