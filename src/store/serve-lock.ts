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

/** Take the home lock, or throw HomeLocked naming the live holder. Returns the release function. */
export function takeHomeLock(home: string): () => void {
  const file = homePaths.serveLock(home)
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      fs.writeFileSync(file, `${process.pid}\n`, { flag: 'wx', mode: 0o600 })
      return () => {
        try {
          if (fs.readFileSync(file, 'utf8').trim() === String(process.pid)) fs.unlinkSync(file)
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
        }
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    }
    const holder = Number(fs.readFileSync(file, 'utf8').trim())
    if (pidAlive(holder) && holder !== process.pid) throw new HomeLocked(home, holder)
    // A dead holder: take its lock over. Renaming it aside first makes the takeover race-free:
    // of two processes taking over, only one rename of the stale file succeeds.
    const aside = `${file}.stale-${process.pid}`
    try {
      fs.renameSync(file, aside)
      fs.unlinkSync(aside)
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e
    }
  }
  throw new Error(`could not take the lock ${file}`)
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
