/**
 * record/journal/reserve: made whole once (random bytes, so no file system keeps it in no room),
 * given back in whole pieces only when it holds enough for the write, made whole again after; a
 * disk without room for it refuses, keeping what it took. Real files in a temporary directory.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Reserve } from '../../../../proxy/record/journal/reserve'

let dir: string
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'holdfast-reserve-'))
})
afterEach(() => {
  jest.restoreAllMocks()
  fs.rmSync(dir, { recursive: true, force: true })
})

const BYTES = 256 * 1024
const file = (): string => path.join(dir, 'journal', '.reserve')

describe('the reserve', () => {
  it('is made whole of random bytes once, and a second ensure writes nothing', () => {
    const r = new Reserve(file(), BYTES)
    r.ensure()
    const bytes = fs.readFileSync(file())
    expect(bytes.length).toBe(BYTES)
    expect(bytes.subarray(0, 4096).every((b) => b === 0)).toBe(false)
    const spy = jest.spyOn(fs, 'writeSync')
    r.ensure()
    new Reserve(file(), BYTES).ensure() // a later start finds it whole
    expect(spy).not.toHaveBeenCalled()
  })

  it('gives back whole pieces for a write it can cover, nothing for one it cannot, and is made whole again', () => {
    const r = new Reserve(file(), BYTES)
    r.ensure()
    expect(r.release(1000)).toBe(true)
    expect(fs.statSync(file()).size).toBe(BYTES - 64 * 1024)
    expect(r.release(BYTES)).toBe(false)
    expect(fs.statSync(file()).size).toBe(BYTES - 64 * 1024)
    expect(r.release(BYTES - 64 * 1024)).toBe(true)
    expect(fs.statSync(file()).size).toBe(0)
    r.ensure()
    expect(fs.statSync(file()).size).toBe(BYTES)
  })

  it('refuses, saying so, when the disk has no room for it, keeps what it took, and asks for the rest next time', () => {
    const r = new Reserve(file(), BYTES)
    const real = fs.writeSync
    jest
      .spyOn(fs, 'writeSync')
      .mockImplementationOnce((fd, data) => real(fd, data as unknown as Buffer, 0, 1000))
    expect(() => r.ensure()).toThrow(/reserve .* could not be made whole \(it holds 1000 of 262144 bytes/)
    expect(fs.statSync(file()).size).toBe(1000)
    r.ensure()
    expect(fs.statSync(file()).size).toBe(BYTES)
  })

  it('of 0 bytes is no file and gives nothing back', () => {
    const r = new Reserve(file(), 0)
    r.ensure()
    expect(fs.existsSync(file())).toBe(false)
    expect(r.release(1)).toBe(false)
  })
})
