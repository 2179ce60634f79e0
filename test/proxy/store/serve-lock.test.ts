/**
 * The home lock (one `serve` per home): a live holder refuses, naming its pid; a holder that is
 * gone — its pid dead, or reused by another process (another start time; for a lock that recorded
 * none, a command line that is not a serve's) — is taken over; and of two serves taking the same
 * stale lock over, only one gets it.
 */
import fs from 'node:fs'
import path from 'node:path'
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { HomeLocked, holderAlive, processStart, takeHomeLock } from '../../../proxy/store/serve-lock'
import { tempHome } from '../../support/harness'

let home: string
let lock: string
/** A pid that is alive and not ours: the jest parent (its command line names no `serve`). */
const other = process.ppid
/** A pid that is dead: a process that has exited. */
const dead = spawnSync(process.execPath, ['-e', '0']).pid
const linux = process.platform === 'linux'

/** The lock a serve with `pid` writes: its pid, then when it started. */
const lockOf = (pid: number, start = processStart(pid)): string => `${pid}\n${start ?? ''}\n`
const firstLine = (): string => fs.readFileSync(lock, 'utf8').split('\n')[0] as string

beforeEach(() => {
  home = tempHome()
  lock = path.join(home, 'serve.lock')
})
afterEach(() => {
  jest.restoreAllMocks()
  fs.rmSync(home, { recursive: true, force: true })
})

it('takes a free lock, writes its pid and its start, and releases it', () => {
  const release = takeHomeLock(home)
  expect(fs.readFileSync(lock, 'utf8')).toBe(lockOf(process.pid))
  expect(fs.statSync(lock).mode & 0o777).toBe(0o600)
  release()
  expect(fs.existsSync(lock)).toBe(false)
  expect(fs.readdirSync(home)).toEqual([])
})

it('refuses while a live process holds it, naming that pid', () => {
  fs.writeFileSync(lock, lockOf(other))
  expect(() => takeHomeLock(home)).toThrow(new HomeLocked(home, other))
  expect(fs.readFileSync(lock, 'utf8')).toBe(lockOf(other))
})

it('takes over the lock of a dead process', () => {
  fs.writeFileSync(lock, `${dead}\n`)
  const release = takeHomeLock(home)
  expect(firstLine()).toBe(String(process.pid))
  release()
  expect(fs.readdirSync(home)).toEqual([])
})

;(linux ? it : it.skip)(
  'takes over a lock whose live pid started at another time (the pid was reused)',
  () => {
    const start = processStart(other) as string
    expect(start).toMatch(/^\d+$/)
    fs.writeFileSync(lock, lockOf(other, String(Number(start) - 1)))
    expect(holderAlive({ pid: other, start: String(Number(start) - 1) })).toBe(false)
    const release = takeHomeLock(home)
    expect(fs.readFileSync(lock, 'utf8')).toBe(lockOf(process.pid))
    release()
  },
)

;(linux ? it : it.skip)(
  'takes over a lock without a start (an older holdfast) whose live pid is not a serve',
  () => {
    fs.writeFileSync(lock, `${other}\n`)
    const release = takeHomeLock(home)
    expect(firstLine()).toBe(String(process.pid))
    release()
  },
)

describe('a lock without a start whose live pid runs a serve', () => {
  let child: ChildProcess
  beforeAll(async () => {
    // A process whose arguments say `serve`, as an older holdfast's serve did.
    child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', 'serve'], { stdio: 'ignore' })
    await once(child, 'spawn')
  })
  afterAll(async () => {
    const exited = once(child, 'exit')
    child.kill()
    await exited
  })

  it('is refused, naming that pid', () => {
    const pid = child.pid as number
    fs.writeFileSync(lock, `${pid}\n`)
    expect(() => takeHomeLock(home)).toThrow(new HomeLocked(home, pid))
    expect(fs.readFileSync(lock, 'utf8')).toBe(`${pid}\n`)
  })
})

it('does not take over a lock another serve took over first', () => {
  fs.writeFileSync(lock, `${dead}\n`)
  // Between our reading the dead pid and our moving the stale file aside, another serve takes
  // the lock over: the file we move is now its live lock.
  const rename = fs.renameSync
  jest.spyOn(fs, 'renameSync').mockImplementationOnce((from, to) => {
    fs.rmSync(lock)
    fs.writeFileSync(lock, lockOf(other))
    rename(from, to)
  })
  expect(() => takeHomeLock(home)).toThrow(new HomeLocked(home, other))
  expect(fs.readFileSync(lock, 'utf8')).toBe(lockOf(other))
  expect(fs.readdirSync(home)).toEqual(['serve.lock'])
})

describe('a lock taken on a full disk (a link whose target names the holder)', () => {
  const linkOf = (pid: number, start = processStart(pid)): void =>
    fs.symlinkSync(`holdfast-serve:${pid}:${start ?? ''}`, lock)

  it('refuses while its live holder runs, naming that pid', () => {
    linkOf(process.ppid)
    expect(() => takeHomeLock(home)).toThrow(new HomeLocked(home, process.ppid))
    expect(fs.lstatSync(lock).isSymbolicLink()).toBe(true)
  })

  it('is taken over when its holder is dead', () => {
    linkOf(dead as number, 'gone')
    const release = takeHomeLock(home)
    expect(firstLine()).toBe(String(process.pid))
    release()
    expect(fs.existsSync(lock)).toBe(false)
  })

  it('is what a start makes when the disk has no block for the pid file, and is released like a file', () => {
    const real = fs.writeFileSync
    jest.spyOn(fs, 'writeFileSync').mockImplementation((file, ...rest) => {
      if (String(file).startsWith(lock))
        throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' })
      return real(file, ...rest)
    })
    const release = takeHomeLock(home)
    expect(fs.readlinkSync(lock)).toBe(`holdfast-serve:${process.pid}:${processStart(process.pid) ?? ''}`)
    release()
    expect(fs.lstatSync(lock, { throwIfNoEntry: false })).toBeUndefined()
  })
})
