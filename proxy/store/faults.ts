/**
 * Which failures of the disk or of git's locks pass: a full disk or quota, a read-only or failing
 * file system, a descriptor limit, a ref another writer holds or moved. What meets one waits and is
 * tried again (the journal keeps it meanwhile); anything else is a fault of the data or of holdfast,
 * which no retry mends. Pure.
 */
import { RefConflict, RefLocked } from './git'

/** errno codes a retry can outlive: space, quota, a read-only or failing disk, limits, a busy file. */
export const TRANSIENT_CODES: ReadonlySet<string> = new Set([
  'ENOSPC',
  'EDQUOT',
  'EROFS',
  'EIO',
  'EACCES',
  'EPERM',
  'EBUSY',
  'EAGAIN',
  'EMFILE',
  'ENFILE',
  'ENOMEM',
])

/** Whether `err` (or an error it was caused by) is a fault that may pass. */
export function isTransientFault(err: unknown): boolean {
  for (let e = err, depth = 0; e && depth < 5; e = (e as Error).cause, depth++) {
    if (e instanceof RefLocked || e instanceof RefConflict) return true
    const code = (e as NodeJS.ErrnoException).code
    if (typeof code === 'string' && TRANSIENT_CODES.has(code)) return true
  }
  return false
}

/** The errno code of `err` or what caused it, if any (for messages and health). */
export function faultCode(err: unknown): string | undefined {
  for (let e = err, depth = 0; e && depth < 5; e = (e as Error).cause, depth++) {
    const code = (e as NodeJS.ErrnoException).code
    if (typeof code === 'string') return code
  }
  return undefined
}
