/** The ops log (store/ops-log): appended rows, each at most 4096 bytes, cut fields named. */
import fs from 'node:fs'
import { appendOps, MAX_ROW_BYTES, opsLine, readOps } from '../../../proxy/store/ops-log'
import { tempHome } from '../../support/harness'

const row = {
  ts: '2026-12-02T00:00:00Z',
  argv: ['dispatch', 'r', 'w', 'p', '--goal', 'g', '--from', 'x'],
  cwd: '/',
  exit: 0,
  origin: 'cli' as const,
  stdout: 'child\n',
  stderr: '',
}

describe('the ops log', () => {
  it('appends rows and never rewrites earlier ones', () => {
    const home = tempHome()
    appendOps(home, row)
    const first = fs.readFileSync(`${home}/ops.jsonl`, 'utf8')
    appendOps(home, { ...row, exit: 1 })
    expect(fs.readFileSync(`${home}/ops.jsonl`, 'utf8').startsWith(first)).toBe(true)
    expect(readOps(home).map((r) => r.exit)).toEqual([0, 1])
    fs.rmSync(home, { recursive: true, force: true })
  })

  it('keeps a row within 4096 bytes, cutting the largest field first, and says which', () => {
    const line = opsLine({
      ...row,
      argv: [...row.argv.slice(0, 5), 'é'.repeat(5000), ...row.argv.slice(6)],
      stdout: 'o'.repeat(3000),
      stderr: 'e'.repeat(3000),
    })
    expect(Buffer.byteLength(line)).toBeLessThanOrEqual(MAX_ROW_BYTES)
    const parsed = JSON.parse(line)
    // The 10 KB goal goes first; what is still over comes out of the next largest (stdout).
    expect(parsed.truncated).toEqual(['argv[5]', 'stdout'])
    expect(parsed.stderr).toBe('e'.repeat(3000))
    expect(parsed.argv[7]).toBe('x')
  })

  it('cuts several fields when one is not enough, and keeps a short stdout whole (regression: a cut once looped)', () => {
    const line = opsLine({
      ...row,
      argv: [...row.argv.slice(0, 5), 'g'.repeat(9000), ...row.argv.slice(6)],
      stderr: 'e'.repeat(9000),
    })
    expect(Buffer.byteLength(line)).toBeLessThanOrEqual(MAX_ROW_BYTES)
    const parsed = JSON.parse(line)
    expect(parsed.truncated.sort()).toEqual(['argv[5]', 'stderr'])
    expect(parsed.stdout).toBe('child\n')
  })

  it('leaves a short row whole', () => {
    expect(JSON.parse(opsLine(row))).toEqual(row)
  })
})
