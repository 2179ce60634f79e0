import { mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { writeFileAtomic } from '../../../proxy/store/atomic'

let dir: string
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'holdfast-atomic-'))
})
afterEach(() => {
  rmSync(dir, { recursive: true, force: true })
})

describe('writeFileAtomic', () => {
  it('writes the bytes and leaves no temp file behind', async () => {
    const file = join(dir, 'a.json')
    await writeFileAtomic(file, '{"x":1}')
    expect(readFileSync(file, 'utf8')).toBe('{"x":1}')
    expect(readdirSync(dir)).toEqual(['a.json'])
  })

  it('writes a Buffer byte for byte', async () => {
    const file = join(dir, 'b.bin')
    const bytes = Buffer.from([0, 255, 10, 13, 0xe2, 0x82])
    await writeFileAtomic(file, bytes)
    expect(readFileSync(file).equals(bytes)).toBe(true)
  })

  it('replaces an existing file whole', async () => {
    const file = join(dir, 'a.json')
    writeFileSync(file, 'a much longer old content that must not survive in part')
    await writeFileAtomic(file, 'new')
    expect(readFileSync(file, 'utf8')).toBe('new')
    expect(readdirSync(dir)).toEqual(['a.json'])
  })

  it('creates missing parent directories', async () => {
    const file = join(dir, 'x', 'y', 'z.json')
    await writeFileAtomic(file, '[]')
    expect(readFileSync(file, 'utf8')).toBe('[]')
    expect(readdirSync(join(dir, 'x', 'y'))).toEqual(['z.json'])
  })

  it('gives the file exactly the mode asked for', async () => {
    const file = join(dir, 'serve.json')
    await writeFileAtomic(file, '{}', 0o600)
    expect(statSync(file).mode & 0o777).toBe(0o600)
  })

  it('rejects and leaves no temp file behind when the rename fails', async () => {
    const target = join(dir, 'occupied')
    mkdirSync(target)
    writeFileSync(join(target, 'inside'), 'x')
    await expect(writeFileAtomic(target, 'data')).rejects.toThrow()
    expect(readdirSync(dir)).toEqual(['occupied'])
    expect(readdirSync(target)).toEqual(['inside'])
  })

  it('leaves no temp file behind when concurrent writes race for one target', async () => {
    const file = join(dir, 'race.json')
    await Promise.all(Array.from({ length: 20 }, (_, i) => writeFileAtomic(file, `value ${i}`)))
    expect(readdirSync(dir)).toEqual(['race.json'])
    expect(readFileSync(file, 'utf8')).toMatch(/^value \d+$/)
  })
})
