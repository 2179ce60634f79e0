/**
 * A file's identity for "has it changed since I read it": inode, size, mtime and ctime in
 * nanoseconds (a same-size rewrite within one millisecond still changes the ctime or inode).
 * Undefined when the file does not exist. Readers that cache a parsed file compare these.
 */
import { statSync } from 'node:fs'

export function fileStamp(file: string): string | undefined {
  const st = statSync(file, { bigint: true, throwIfNoEntry: false })
  return st ? `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}` : undefined
}
