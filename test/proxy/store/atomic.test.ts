import { mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { writeFileAtomic, writeFileAtomicSync } from '../../../proxy/store/atomic'

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

describe('writeFileAtomicSync', () => {
  it('writes many parts in order past writev’s 1024 buffers a call, skipping empty ones', () => {
    const file = join(dir, 'parts.bin')
    const parts = Array.from({ length: 3000 }, (_, i) => Buffer.from(i % 7 === 0 ? '' : `${i},`))
    writeFileAtomicSync(file, parts)
    expect(readFileSync(file)).toEqual(Buffer.concat(parts))
    expect(readdirSync(dir)).toEqual(['parts.bin'])
  })

  it('writes a hundred thousand parts in time linear in their number (regression: the array of the rest was copied per part)', () => {
    const file = join(dir, 'many.bin')
    const parts = Array.from({ length: 100_000 }, (_, i) => Buffer.from([i & 0xff]))
    // Copying the rest per part was 5·10⁹ element copies here: far past the test's timeout.
    writeFileAtomicSync(file, parts)
    expect(readFileSync(file)).toEqual(Buffer.concat(parts))
  })
})
