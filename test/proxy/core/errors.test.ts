/** The error table in code and the one in docs/errors.md are the same table. */
import fs from 'node:fs'
import path from 'node:path'
import { ERROR_CODES, HoldfastError } from '../../../proxy/core/errors'

const doc = fs.readFileSync(path.join(__dirname, '..', '..', '..', 'docs', 'errors.md'), 'utf8')
// Cells may be padded (prettier aligns the table).
const rows = [...doc.matchAll(/^\| +`([A-Z_]+)` +\| +(\d+) +\| +`([a-z_]+)` +\| +(.+?) +\|$/gm)].map((m) => ({
  code: m[1],
  status: Number(m[2]),
  type: m[3],
  meaning: m[4],
}))

describe('the error table', () => {
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
