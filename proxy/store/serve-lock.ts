/**
 * One `serve` per home: `<home>/serve.lock` (created exclusively, holding the pid and when that
 * process started) and `<home>/serve.json` (url, pid; mode 0600) for other commands and the git
 * hooks to find it. Invariant: a lock whose holder is gone is taken over — its pid dead, or alive
 * but another process (the pid was reused: it started at another time, or, for a lock that
 * recorded no start, its command line is not a serve's); a live holder refuses, naming its pid.
 * Where a process's start cannot be read, a live pid counts as the holder. On a full disk (no
 * block for the pid file) the lock is a symbolic link whose target holds the same two fields: a
 * short link lives in the inode, so serve still starts there.
 */
import fs from 'node:fs'
import path from 'node:path'
import { homePaths } from './home'
import { writeFileAtomic } from './atomic'
import { psStartTime } from '../process/spawn'

export interface ServeInfo {
  url: string
  pid: number
  started_at: string
  home: string
  /** Started by `holdfast run` (`serve --leased`): it stops once no run holds a lease. */
  leased?: boolean
}

export class HomeLocked extends Error {
  constructor(
    readonly home: string,
    readonly pid: number,
  ) {
    super(`holdfast serve is already running on ${home} (pid ${pid})`)
    this.name = 'HomeLocked'
  }
}

export function pidAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

const code = (err: unknown): string | undefined => (err as NodeJS.ErrnoException).code

/**
 * When process `pid` started, as an opaque string that differs for a later process given the same
 * pid: its start time in clock ticks since boot on Linux (`/proc/<pid>/stat`, field 22), `ps`'s
 * `lstart` elsewhere; undefined when the system does not say.
 */
export function processStart(pid: number): string | undefined {
  if (process.platform === 'linux') {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
      // "pid (comm) state ppid …": comm may hold spaces and parentheses; fields count on after it.
      return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]
    } catch {
      return undefined // gone, or no procfs: unknown
    }
  }
  if (process.platform === 'win32') return undefined
  return psStartTime(pid)
}

/** A process's arguments (Linux: `/proc/<pid>/cmdline`); undefined where they cannot be read. */
function commandLine(pid: number): string[] | undefined {
  if (process.platform !== 'linux') return undefined
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')
  } catch {
    return undefined
  }
}

/** What a lock file says: the holder's pid (0 when it names none) and, when recorded, its start. */
export interface Holder {
  pid: number
  start: string | undefined
}

/** A symbolic link's target that names a holder (the lock taken on a full disk). */
const LINK_PREFIX = 'holdfast-serve:'

/** The holder a lock file names; undefined when the file is gone. */
function holderOf(file: string): Holder | undefined {
  let text: string
  try {
    text = fs.readFileSync(file, 'utf8')
  } catch (err) {
    if (code(err) !== 'ENOENT') throw err
    // A lock taken on a full disk is a link to no file: its target names the holder.
    try {
      const target = fs.readlinkSync(file)
      if (!target.startsWith(LINK_PREFIX)) return { pid: 0, start: undefined }
      text = target.slice(LINK_PREFIX.length).split(':').join('\n')
    } catch (err2) {
      if (code(err2) === 'ENOENT' || code(err2) === 'EINVAL') return undefined
      throw err2
    }
  }
  const [pid, start] = text.split('\n')
  return { pid: Number(pid?.trim()) || 0, start: start?.trim() || undefined }
}

/** A disk with no room for a block (a symbolic link's short target still fits in the inode). */
const noRoom = (err: unknown): boolean => code(err) === 'ENOSPC' || code(err) === 'EDQUOT'

/**
 * Whether the process a lock names is alive and is that holder: a live pid whose start differs
 * from the recorded one is another process (the pid was reused); for a lock that recorded no
 * start (an older holdfast), a readable command line without `serve` is not a serve.
 */
export function holderAlive(h: Holder): boolean {
  if (!pidAlive(h.pid)) return false
  if (h.start !== undefined) {
    const now = processStart(h.pid)
    return now === undefined || now === h.start
  }
  const argv = commandLine(h.pid)
  return argv === undefined || argv.includes('serve')
}

/** Create `file` exclusively as a hard link of the written `mine` (EEXIST when it exists). */
function createWith(mine: string, file: string): void {
  try {
    fs.linkSync(mine, file)
  } catch (err) {
    if (code(err) === 'EEXIST') throw err
    // The lock as a link (full disk): a new link with the same target is as atomic as the hard link.
    if (fs.lstatSync(mine).isSymbolicLink()) return fs.symlinkSync(fs.readlinkSync(mine), file)
    // A file system without hard links: create, then write (a reader may see it empty briefly).
    fs.writeFileSync(file, fs.readFileSync(mine), { flag: 'wx', mode: 0o600 })
  }
}

/** Take the home lock, or throw HomeLocked naming the live holder. Returns the release function. */
export function takeHomeLock(home: string): () => void {
  const file = homePaths.serveLock(home)
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
  // The lock appears with its pid already in it (hard link of a written file): a reader never
  // sees an empty lock and mistakes a starting holder for a dead one.
  const mine = `${file}.${process.pid}.tmp`
  const start = processStart(process.pid) ?? ''
  try {
    fs.writeFileSync(mine, `${process.pid}\n${start}\n`, { mode: 0o600 })
  } catch (err) {
    fs.rmSync(mine, { force: true })
    if (!noRoom(err)) throw err
    // No room for the pid file: the lock is a link whose target holds the pid and the start.
    fs.symlinkSync(`${LINK_PREFIX}${process.pid}:${start}`, mine)
  }
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        createWith(mine, file)
        return () => {
          if (holderOf(file)?.pid === process.pid) fs.rmSync(file, { force: true })
        }
      } catch (err) {
        if (code(err) !== 'EEXIST') throw err
      }
      const holder = holderOf(file)
      if (holder === undefined) continue // released meanwhile
      if (holder.pid !== process.pid && holderAlive(holder)) throw new HomeLocked(home, holder.pid)
      // A holder that is gone: take its lock over. Renaming it aside first makes the takeover race-free:
      // of two processes taking over, only one rename of the stale file succeeds.
      const aside = `${file}.stale-${process.pid}`
      try {
        fs.renameSync(file, aside)
      } catch (err) {
        if (code(err) === 'ENOENT') continue
        throw err
      }
      // The rename moved whatever lock was there: when another serve took the dead lock over
      // between our read and our rename, that is its live lock. Put it back and refuse.
      const moved = holderOf(aside)
      if (
        moved !== undefined &&
        (moved.pid !== holder.pid || moved.start !== holder.start) &&
        moved.pid !== process.pid &&
        holderAlive(moved)
      ) {
        try {
          createWith(aside, file)
        } catch (err) {
          if (code(err) !== 'EEXIST') throw err
        }
        fs.rmSync(aside, { force: true })
        throw new HomeLocked(home, moved.pid)
      }
      fs.rmSync(aside, { force: true })
    }
    throw new Error(`could not take the lock ${file}`)
  } finally {
    fs.rmSync(mine, { force: true })
  }
}

/** The live pid holding the home lock (a serve starting, running or stopping), or undefined. */
export function homeLockHolder(home: string): number | undefined {
  const holder = holderOf(homePaths.serveLock(home))
  return holder !== undefined && holder.pid > 0 && holderAlive(holder) ? holder.pid : undefined
}

export async function writeServeInfo(home: string, info: ServeInfo): Promise<void> {
  await writeFileAtomic(homePaths.serveJson(home), JSON.stringify(info, null, 2) + '\n', 0o600)
}

export function removeServeInfo(home: string): void {
  fs.rmSync(homePaths.serveJson(home), { force: true })
}

/** The running server of this home, when its serve.json names a live pid. */
export function readServeInfo(home: string): ServeInfo | undefined {
  try {
    const info = JSON.parse(fs.readFileSync(homePaths.serveJson(home), 'utf8')) as ServeInfo
    return pidAlive(info.pid) ? info : undefined
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw err
  }
}
