/**
 * The home lock (one `serve` per home): a live holder refuses, naming its pid; a dead holder's
 * lock is taken over; and of two serves taking the same dead lock over, only one gets it.
 */
import fs from 'node:fs'
import path from 'node:path'
import { spawnSync } from 'node:child_process'
import { HomeLocked, takeHomeLock } from '../../../proxy/store/serve-lock'
import { tempHome } from '../../support/harness'

let home: string
let lock: string
/** A pid that is alive and not ours: the jest parent. */
const other = process.ppid
/** A pid that is dead: a process that has exited. */
const dead = spawnSync(process.execPath, ['-e', '0']).pid

beforeEach(() => {
  home = tempHome()
  lock = path.join(home, 'serve.lock')
})
afterEach(() => {
  jest.restoreAllMocks()
  fs.rmSync(home, { recursive: true, force: true })
})

it('takes a free lock, writes its pid, and releases it', () => {
  const release = takeHomeLock(home)
  expect(fs.readFileSync(lock, 'utf8').trim()).toBe(String(process.pid))
  expect(fs.statSync(lock).mode & 0o777).toBe(0o600)
  release()
  expect(fs.existsSync(lock)).toBe(false)
  expect(fs.readdirSync(home)).toEqual([])
})

it('refuses while a live process holds it, naming that pid', () => {
  fs.writeFileSync(lock, `${other}\n`)
  expect(() => takeHomeLock(home)).toThrow(new HomeLocked(home, other))
  expect(fs.readFileSync(lock, 'utf8').trim()).toBe(String(other))
})

it('takes over the lock of a dead process', () => {
  fs.writeFileSync(lock, `${dead}\n`)
  const release = takeHomeLock(home)
  expect(fs.readFileSync(lock, 'utf8').trim()).toBe(String(process.pid))
  release()
  expect(fs.readdirSync(home)).toEqual([])
})

it('does not take over a lock another serve took over first', () => {
  fs.writeFileSync(lock, `${dead}\n`)
  // Between our reading the dead pid and our moving the stale file aside, another serve takes
  // the lock over: the file we move is now its live lock.
  const rename = fs.renameSync
  jest.spyOn(fs, 'renameSync').mockImplementationOnce((from, to) => {
    fs.rmSync(lock)
    fs.writeFileSync(lock, `${other}\n`)
    rename(from, to)
  })
  expect(() => takeHomeLock(home)).toThrow(new HomeLocked(home, other))
  expect(fs.readFileSync(lock, 'utf8').trim()).toBe(String(other))
  expect(fs.readdirSync(home)).toEqual(['serve.lock'])
})
