/**
 * One `serve` per home: `<home>/serve.lock` (created exclusively, holding the pid) and
 * `<home>/serve.json` (url, pid; mode 0600) for other commands and the git hooks to find it.
 * Invariant: a lock whose pid is dead is taken over; a live one refuses, naming its pid.
 */
import fs from 'node:fs'
import path from 'node:path'
import { homePaths } from './home'
import { writeFileAtomic } from './atomic'

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

/** The pid a lock file names (0 when it names none); undefined when the file is gone. */
function holderOf(file: string): number | undefined {
  try {
    return Number(fs.readFileSync(file, 'utf8').trim()) || 0
  } catch (err) {
    if (code(err) === 'ENOENT') return undefined
    throw err
  }
}

/** Create `file` exclusively as a hard link of the written `mine` (EEXIST when it exists). */
function createWith(mine: string, file: string): void {
  try {
    fs.linkSync(mine, file)
  } catch (err) {
    if (code(err) === 'EEXIST') throw err
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
  fs.writeFileSync(mine, `${process.pid}\n`, { mode: 0o600 })
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        createWith(mine, file)
        return () => {
          if (holderOf(file) === process.pid) fs.rmSync(file, { force: true })
        }
      } catch (err) {
        if (code(err) !== 'EEXIST') throw err
      }
      const holder = holderOf(file)
      if (holder === undefined) continue // released meanwhile
      if (pidAlive(holder) && holder !== process.pid) throw new HomeLocked(home, holder)
      // A dead holder: take its lock over. Renaming it aside first makes the takeover race-free:
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
      if (moved !== undefined && moved !== holder && moved !== process.pid && pidAlive(moved)) {
        try {
          createWith(aside, file)
        } catch (err) {
          if (code(err) !== 'EEXIST') throw err
        }
        fs.rmSync(aside, { force: true })
        throw new HomeLocked(home, moved)
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
  return holder !== undefined && holder > 0 && pidAlive(holder) ? holder : undefined
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
