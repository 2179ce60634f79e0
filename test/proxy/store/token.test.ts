/**
 * store/token: the home's token file. Covers: made once with mode 0600 and kept, read back
 * trimmed, absent reads as undefined, a configured token wins over the file, and two makers
 * racing end with one token.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseConfig } from '../../../proxy/store/config'
import { ensureTokenFile, homeToken, newToken, readTokenFile } from '../../../proxy/store/token'

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
})
