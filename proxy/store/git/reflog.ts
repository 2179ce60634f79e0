/**
 * Reflogs as git writes them (`logs/<ref>`: `git reflog <ref>` reads them): a line per move, the
 * old and new values, who, when, and the message. A ref's trail for recovery (store/git/check
 * follows it back when a power cut took a tip's objects), not the ref: a line that cannot be
 * written is no failure of the move. An absent reflog reads as no entries.
 */
import fs from 'node:fs'
import * as path from 'node:path'
import { COMMIT_AUTHOR, stepOfSubject } from '../../core/layout'
import { fsyncDir } from '../atomic'

const ZERO_OID = '0'.repeat(40)
const REFLOG_WHO = `${COMMIT_AUTHOR.name} <${COMMIT_AUTHOR.email}>`

/**
 * Append one line to `logs/<ref>` in git's reflog format (`git reflog <ref>` reads it): the old
 * and new values, who, when, and the message. With `durable` the line (and a new file's directory
 * entry) is on the disk before this returns: a start after a power cut reads from it how far the
 * branch had gone (the numbers it gave). Returns whether the line was written: one that cannot be
 * (a full disk) is no failure of the move (the reflog is a trail for recovery, not the ref).
 */
export function appendReflog(
  gitdir: string,
  ref: string,
  from: string | null,
  to: string,
  message: string,
  options: { durable?: boolean } = {},
): boolean {
  const file = path.join(gitdir, 'logs', ref)
  const line = `${from ?? ZERO_OID} ${to} ${REFLOG_WHO} ${Math.floor(Date.now() / 1000)} +0000\t${message.split('\n')[0]}\n`
  try {
    let fd: number
    try {
      fd = fs.openSync(file, 'a')
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
      fs.mkdirSync(path.dirname(file), { recursive: true })
      fd = fs.openSync(file, 'a')
    }
    try {
      const made = fs.fstatSync(fd).size === 0
      fs.writeSync(fd, line)
      if (options.durable) {
        fs.fdatasyncSync(fd)
        if (made) fsyncDir(path.dirname(file))
      }
    } finally {
      fs.closeSync(fd)
    }
    return true
  } catch {
    // A full or read-only disk refuses the trail: the move itself stands; the answer says so.
    return false
  }
}

/** One reflog line: the values before and after, and the message. */
export interface ReflogEntry {
  from: string
  to: string
  message: string
}

/** The reflog of `ref`, newest first; lines that do not read as reflog lines (a torn tail) are skipped. */
export function readReflog(gitdir: string, ref: string): ReflogEntry[] {
  let text = ''
  try {
    text = fs.readFileSync(path.join(gitdir, 'logs', ref), 'utf8')
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code !== 'ENOENT' && code !== 'ENOTDIR' && code !== 'EISDIR') throw err
  }
  const out: ReflogEntry[] = []
  for (const line of text.split('\n')) {
    const m = /^([0-9a-f]{40}) ([0-9a-f]{40}) [^\t]*\t(.*)$/.exec(line)
    if (m) out.push({ from: m[1] as string, to: m[2] as string, message: m[3] as string })
  }
  return out.reverse()
}

/** How a reflog line of a branch moved by a heal begins (the rest is the step's subject). */
export const HEAL_REFLOG_PREFIX = 'holdfast heal: '

/**
 * The highest step any reflog line of `ref` names (0 when none): how far the branch went, a
 * number it gave, whatever its tip says now. A heal's line (HEAL_REFLOG_PREFIX) counts like a
 * commit's.
 */
export function highestInReflog(gitdir: string, ref: string): number {
  let max = 0
  for (const e of readReflog(gitdir, ref)) {
    const subject = e.message.startsWith(HEAL_REFLOG_PREFIX)
      ? e.message.slice(HEAL_REFLOG_PREFIX.length)
      : e.message
    max = Math.max(max, stepOfSubject(subject)?.n ?? 0)
  }
  return max
}
