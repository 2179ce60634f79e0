/**
 * proxy/process/run-leases: a lease is live while its run or its command lives, a dead one is removed by
 * whoever reads it; a leased serve stops once no live lease is left (told by the directory watch,
 * or by its periodic check for a run that was killed), and takes itself off serve.json first, so
 * a lease that appears at that moment keeps it up and gets serve.json back.
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { silentLogger } from '../../../proxy/process/log'
import { liveLeases, runsDir, stopWhenUnleased, takeLease } from '../../../proxy/process/run-leases'
import { readServeInfo, writeServeInfo } from '../../../proxy/store/serve-lock'
import { tempHome } from '../../support/harness'

/** A pid that was alive and is not any more. */
const deadPid = (): number => spawnSync(process.execPath, ['-e', '']).pid as number

let home: string
beforeEach(() => {
  home = tempHome()
})
afterEach(() => fs.rmSync(home, { recursive: true, force: true }))

const until = async (ok: () => boolean, what: string, ms = 10_000): Promise<void> => {
  const end = Date.now() + ms
  while (!ok()) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms: ${what}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

describe('leases', () => {
  it('counts a live run, and removes the lease of a dead one', () => {
    const mine = takeLease(home, 'claude')
    takeLease(home, 'codex', deadPid())
    expect(liveLeases(home)).toEqual([process.pid])
    expect(fs.readdirSync(runsDir(home))).toEqual([`${process.pid}.json`])
    mine.release()
    expect(liveLeases(home)).toEqual([])
  })

  it('keeps the lease of a killed run live while its command still runs', () => {
    const lease = takeLease(home, 'claude', deadPid())
    lease.setChild(process.pid)
    expect(liveLeases(home)).toHaveLength(1)
  })
})

describe('stopWhenUnleased', () => {
  const info = { url: 'http://127.0.0.1:1', pid: process.pid, started_at: 'now', home, leased: true }

  it('stops the serve once the last lease is released, taking serve.json away first', async () => {
    await writeServeInfo(home, { ...info, home })
    const lease = takeLease(home, 'claude')
    const stops: string[] = []
    const unwatch = stopWhenUnleased(home, (why) => stops.push(why), silentLogger())
    try {
      expect(stops).toEqual([])
      lease.release()
      await until(() => stops.length === 1, 'the serve stopped')
      expect(stops[0]).toBe('no holdfast run holds a lease on this home any more')
      expect(readServeInfo(home)).toBeUndefined()
    } finally {
      unwatch()
    }
  })

  it('stops at once when the only lease is a killed run’s', async () => {
    await writeServeInfo(home, { ...info, home })
    takeLease(home, 'claude', deadPid())
    const stops: string[] = []
    const unwatch = stopWhenUnleased(home, (why) => stops.push(why), silentLogger())
    try {
      await until(() => stops.length === 1, 'the serve stopped')
    } finally {
      unwatch()
    }
    expect(fs.existsSync(path.join(home, 'serve.json'))).toBe(false)
  })
})
