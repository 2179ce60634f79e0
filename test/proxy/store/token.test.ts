/**
 * store/token: the home's token file. Covers: made once with mode 0600 and kept, read back
 * trimmed, absent reads as undefined, a configured token wins over the file, two makers racing
 * end with one token, a write that fails leaves no token file; and which of the home's secrets
 * are open to others.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseConfig } from '../../../proxy/store/config'
import {
  ensureTokenFile,
  exposedSecrets,
  homeToken,
  newToken,
  readTokenFile,
} from '../../../proxy/store/token'

describe('the home token', () => {
  let home: string
  const saved = process.env.HOLDFAST_TOKEN
  beforeEach(() => {
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'hf-token-'))
    delete process.env.HOLDFAST_TOKEN
  })
  afterEach(() => {
    fs.rmSync(home, { recursive: true, force: true })
    if (saved === undefined) delete process.env.HOLDFAST_TOKEN
    else process.env.HOLDFAST_TOKEN = saved
  })

  it('is made at the first ensure with mode 0600 and the same token is returned after', () => {
    expect(readTokenFile(home)).toBeUndefined()
    const t = ensureTokenFile(home)
    expect(t).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(fs.statSync(path.join(home, 'token')).mode & 0o777).toBe(0o600)
    expect(ensureTokenFile(home)).toBe(t)
    expect(readTokenFile(home)).toBe(t)
  })

  it('is a different random value for every new home', () => {
    expect(newToken()).not.toBe(newToken())
  })

  it('never begins with "-", which a command line reads as an option and a name refuses (one draw in 64 would)', () => {
    const firsts = new Set(Array.from({ length: 2000 }, () => newToken()[0]))
    expect(firsts.has('-')).toBe(false)
    expect(firsts.size).toBeGreaterThan(32) // still random in its first character
  })

  it('reads a token written by hand, trimmed', () => {
    fs.writeFileSync(path.join(home, 'token'), '  my-token \n', { mode: 0o600 })
    expect(ensureTokenFile(home)).toBe('my-token')
  })

  it('is undefined for clients when none is configured and no file exists yet', () => {
    expect(homeToken(home, parseConfig('', 'holdfast.yaml'))).toBeUndefined()
  })

  it('gives the configured token over the file, and HOLDFAST_TOKEN over both', () => {
    ensureTokenFile(home)
    expect(homeToken(home, parseConfig('token: from-yaml-0123456789\n', 'holdfast.yaml'))).toBe(
      'from-yaml-0123456789',
    )
    process.env.HOLDFAST_TOKEN = 'from-env'
    expect(homeToken(home, parseConfig('token: from-yaml-0123456789\n', 'holdfast.yaml'))).toBe('from-env')
  })

  it('refuses an existing empty file instead of making a second token beside it', () => {
    fs.writeFileSync(path.join(home, 'token'), '', { mode: 0o600 })
    expect(() => ensureTokenFile(home)).toThrow(/holds no token/)
  })

  it('ends two makers racing with one token: the later one takes the token the first linked in', () => {
    const link = fs.linkSync
    let theirs = ''
    const spy = jest.spyOn(fs, 'linkSync').mockImplementationOnce((from, to) => {
      // Another start links its token in between our write and our link.
      theirs = newToken()
      fs.writeFileSync(to, `${theirs}\n`, { flag: 'wx', mode: 0o600 })
      link(from, to)
    })
    try {
      expect(ensureTokenFile(home)).toBe(theirs)
    } finally {
      spy.mockRestore()
    }
    expect(readTokenFile(home)).toBe(theirs)
    expect(fs.readdirSync(home)).toEqual(['token'])
  })

  it('leaves no token file when its write fails (a full disk must not leave an empty token)', () => {
    const spy = jest.spyOn(fs, 'writeSync').mockImplementationOnce(() => {
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })
    })
    try {
      expect(() => ensureTokenFile(home)).toThrow(/ENOSPC/)
    } finally {
      spy.mockRestore()
    }
    expect(fs.readdirSync(home)).toEqual([])
    expect(ensureTokenFile(home)).toMatch(/^[A-Za-z0-9_-]{43}$/)
  })
})

;(process.platform === 'win32' ? describe.skip : describe)('exposedSecrets', () => {
  let home: string
  beforeEach(() => {
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'hf-token-'))
  })
  afterEach(() => fs.rmSync(home, { recursive: true, force: true }))

  it('names nothing when the files are 0600 or absent', () => {
    expect(exposedSecrets(home)).toEqual([])
    fs.writeFileSync(path.join(home, 'holdfast.yaml'), '{}', { mode: 0o600 })
    ensureTokenFile(home)
    expect(exposedSecrets(home)).toEqual([])
    fs.chmodSync(path.join(home, 'holdfast.yaml'), 0o700) // the owner's bits are the owner's business
    expect(exposedSecrets(home)).toEqual([])
  })

  it.each([
    ['0644', 'group and others (mode 0644: they can read it)'],
    ['0640', 'group (mode 0640: they can read it)'],
    ['0602', 'others (mode 0602: they can write it)'],
    ['0666', 'group and others (mode 0666: they can read and write it)'],
  ])('names a file of mode %s: open to %s', (mode, said) => {
    const file = path.join(home, 'holdfast.yaml')
    fs.writeFileSync(file, '{}')
    fs.chmodSync(file, parseInt(mode, 8))
    expect(exposedSecrets(home)).toEqual([`${file} is open to ${said}; run: chmod 600 ${file}`])
  })
})
