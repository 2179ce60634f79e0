/**
 * record/journal/open-files: one descriptor per file, opened to append; past `max`, the least
 * recently used one is closed. Real files in a temporary directory.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { OpenFiles } from '../../../../proxy/record/journal/open-files'

let dir: string
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-open-'))
})
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

describe('the open files', () => {
  it('keep one descriptor per file, appending, and close the least recently used past their bound', () => {
    const files = new OpenFiles(2)
    const [a, b, c] = ['a', 'b', 'c'].map((n) => path.join(dir, n)) as [string, string, string]
    const fa = files.fd(a)
    expect(files.fd(a)).toBe(fa)
    fs.writeSync(fa, 'one')
    files.fd(b)
    files.fd(a) // a is now the most recent: b goes when c opens
    files.fd(c)
    expect(() => fs.fstatSync(fa)).not.toThrow()
    fs.writeSync(files.fd(a), 'two')
    expect(fs.readFileSync(a, 'utf8')).toBe('onetwo')
    files.closeAll()
    expect(() => fs.fstatSync(fa)).toThrow(/EBADF/)
  })
})
