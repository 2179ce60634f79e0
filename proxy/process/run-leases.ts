/**
 * Leases of `holdfast run` on a home (DESIGN §11 amended: `run` shares one serve between
 * concurrent runs). Each run writes `<home>/runs/<pid>.json` before it looks for a serve, and
 * removes it when its command exited; a serve that `run` started (`serve --leased`) stops once no
 * live lease is left. Invariant: a lease is live while its run or its command is alive (a killed
 * run whose command goes on keeps the serve up for it); a dead lease is removed by whoever reads
 * it. The serve takes itself off `serve.json` before it checks a last time, so a run that wrote its
 * lease after that check finds no serve and starts its own rather than joining one that is going.
 */
import fs from 'node:fs'
import path from 'node:path'
import type { Logger } from './log'
import { pidAlive, readServeInfo, removeServeInfo, writeServeInfo } from '../store/serve-lock'

export const runsDir = (home: string): string => path.join(home, 'runs')

interface LeaseFile {
  pid: number
  child?: number
  started_at: string
  cwd: string
  command: string
}

export interface Lease {
  /** Name the command's pid, so the lease stays live while the command runs. */
  setChild(pid: number | undefined): void
  release(): void
}

/** Write this process's lease (`pid`: for tests). */
export function takeLease(home: string, command: string, pid = process.pid): Lease {
  const dir = runsDir(home)
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  const file = path.join(dir, `${pid}.json`)
  const body: LeaseFile = { pid, started_at: new Date().toISOString(), cwd: process.cwd(), command }
  const write = (): void => {
    const tmp = `${file}.tmp`
    fs.writeFileSync(tmp, JSON.stringify(body) + '\n', { mode: 0o600 })
    fs.renameSync(tmp, file)
  }
  write()
  return {
    setChild(child) {
      if (child === undefined) return
      body.child = child
      write()
    },
    release() {
      fs.rmSync(file, { force: true })
    },
  }
}

/** The pids of the live leases of `home` (dead ones are removed on the way). */
export function liveLeases(home: string): number[] {
  let names: string[]
  try {
    names = fs.readdirSync(runsDir(home))
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw err
  }
  const live: number[] = []
  for (const name of names) {
    if (!name.endsWith('.json')) continue
    const file = path.join(runsDir(home), name)
    let lease: Partial<LeaseFile>
    try {
      lease = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<LeaseFile>
    } catch {
      continue // being written (renamed into place whole) or gone: the next read settles it
    }
    const pid = Number(lease.pid)
    if (pidAlive(pid) || (lease.child !== undefined && pidAlive(Number(lease.child)))) live.push(pid)
    else fs.rmSync(file, { force: true })
  }
  return live
}

/** How often a leased serve looks at the leases besides being told by the directory watch. */
export const LEASE_CHECK_MS = 1000

/**
 * For a serve that `run` started: call `stop` once no live lease is left (checked when the runs
 * directory changes, and every LEASE_CHECK_MS for a run that was killed). Returns the unwatch.
 */
export function stopWhenUnleased(home: string, stop: (why: string) => void, log: Logger): () => void {
  fs.mkdirSync(runsDir(home), { recursive: true, mode: 0o700 })
  let done = false
  let checking = false
  const check = async (): Promise<void> => {
    if (done || checking) return
    checking = true
    try {
      if (liveLeases(home).length > 0) return
      const info = readServeInfo(home)
      removeServeInfo(home)
      if (liveLeases(home).length > 0) {
        if (info) await writeServeInfo(home, info)
        return
      }
      done = true
      unwatch()
      stop('no holdfast run holds a lease on this home any more')
    } catch (err) {
      log.warn({ err: String(err) }, 'could not check the leases of holdfast run')
    } finally {
      checking = false
    }
  }
  const run = (): void => void check()
  const timer = setInterval(run, LEASE_CHECK_MS)
  let watcher: fs.FSWatcher | undefined
  try {
    watcher = fs.watch(runsDir(home), { persistent: false }, run)
  } catch (err) {
    log.debug({ err: String(err) }, 'cannot watch the runs directory; checking every second')
  }
  const unwatch = (): void => {
    clearInterval(timer)
    watcher?.close()
  }
  run()
  return unwatch
}
