/**
 * store/faults: which failures pass. A full disk, a quota, a read-only or failing file system, a
 * descriptor limit, a ref another writer holds or moved may pass (wait and try again); a missing
 * file, a bad path or a plain bug do not. A cause chain is followed.
 */
import { RefConflict, RefLocked } from '../../../proxy/store/git/refs'
import { faultCode, isTransientFault } from '../../../proxy/store/faults'

const errno = (code: string): Error => Object.assign(new Error(`${code}: x`), { code })

describe('a fault that may pass', () => {
  it('is a full, read-only or failing disk, a limit, or a ref held or moved by another writer', () => {
    for (const code of ['ENOSPC', 'EDQUOT', 'EROFS', 'EIO', 'EMFILE', 'ENFILE', 'EACCES'])
      expect([code, isTransientFault(errno(code))]).toEqual([code, true])
    expect(isTransientFault(new RefLocked('refs/heads/agents/a', '/x.lock'))).toBe(true)
    expect(isTransientFault(new RefConflict('refs/heads/agents/a', null, 'b'.repeat(40)))).toBe(true)
  })

  it('is not a missing file, a bad path or a plain error', () => {
    for (const err of [errno('ENOENT'), errno('ENOTDIR'), errno('EISDIR'), new TypeError('x')])
      expect(isTransientFault(err)).toBe(false)
    expect(isTransientFault(undefined)).toBe(false)
  })

  it('is found through the cause of a wrapping error, and its code read there', () => {
    const wrapped = new Error('the record could not be written', { cause: errno('ENOSPC') })
    expect(isTransientFault(wrapped)).toBe(true)
    expect(faultCode(wrapped)).toBe('ENOSPC')
    expect(faultCode(new Error('plain'))).toBeUndefined()
  })
})
