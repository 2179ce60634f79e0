/**
 * The process logger (proxy/process/log): JSON lines for machines, one readable line for a person
 * at a terminal; a reader that stalls loses entries (counted, then reported) instead of holding
 * up the process.
 */
import { Writable } from 'node:stream'
import { createLogger, flushLogger, LOG_BUFFER_BYTES, readable } from '../../../proxy/process/log'

/** A real stream whose consumer takes nothing until `drain()` (a pipe whose reader stalled). */
function stalledReader(): { out: Writable; lines: () => string[]; drain(): void } {
  const held: (() => void)[] = []
  let stalled = true
  let text = ''
  const out = new Writable({
    write(chunk: Buffer, _enc, done) {
      text += chunk.toString()
      if (stalled) held.push(done)
      else done()
    },
  })
  return {
    out,
    lines: () => text.split('\n').filter(Boolean),
    drain: () => {
      stalled = false
      for (const done of held.splice(0)) done()
    },
  }
}

describe('log lines', () => {
  it('reads a JSON entry as time, level, message and its fields', () => {
    const line = JSON.stringify({
      level: 30,
      time: Date.UTC(2026, 11, 3, 9, 4, 5),
      pid: 1,
      hostname: 'h',
      name: 'holdfast',
      msg: 'step',
      ws: 'w',
      n: 2,
    })
    expect(readable(line)).toMatch(/^\d\d:\d\d:\d\d info {2}step {2}ws=w n=2\n$/)
  })

  it('leaves a line that is not JSON as it is', () => {
    expect(readable('plain')).toBe('plain')
  })

  it('writes readable lines on a terminal', () => {
    const written: string[] = []
    const spy = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk))
      return true
    })
    try {
      createLogger('info', true).info({ ws: 'w' }, 'hello')
    } finally {
      spy.mockRestore()
    }
    expect(written).toHaveLength(1)
    expect(written[0]).toMatch(/^\d\d:\d\d:\d\d info {2}hello {2}ws=w\n$/)
  })

  it('drops and counts entries while the reader stalls, never waiting for it, and says how many once it drains', async () => {
    const reader = stalledReader()
    const log = createLogger('info', false, reader.out)
    const pad = 'x'.repeat(1000)
    const entries = Math.ceil((2 * LOG_BUFFER_BYTES) / pad.length)
    const started = Date.now()
    for (let i = 0; i < entries; i++) log.info({ i, pad }, 'step')
    expect(Date.now() - started).toBeLessThan(5000) // returned: nothing waited on the reader
    expect(reader.out.writableLength).toBeLessThan(LOG_BUFFER_BYTES + 2 * pad.length) // the bound holds

    reader.drain()
    await new Promise((r) => setImmediate(r))
    const lines = reader
      .lines()
      .map((l) => JSON.parse(l) as { i?: number; msg: string; level: number; dropped?: number })
    const report = lines[lines.length - 1]!
    const kept = lines.slice(0, -1)
    expect(report.dropped).toBeGreaterThan(0)
    expect(report).toMatchObject({
      level: 40,
      msg: `the log reader stalled: ${report.dropped} entries were dropped`,
    })
    // The first entries are kept in order; the dropped ones are exactly the rest.
    expect(kept.map((e) => e.i)).toEqual([...Array(kept.length).keys()])
    expect(kept.length + (report.dropped as number)).toBe(entries)

    log.info('after')
    expect(reader.lines()[reader.lines().length - 1]).toContain('"msg":"after"')
  })

  it('waits for a stalled reader at shutdown only as long as the bound, and reports the drops in the flush', async () => {
    const reader = stalledReader()
    const log = createLogger('info', false, reader.out)
    const pad = 'x'.repeat(1000)
    for (let i = 0; i < (2 * LOG_BUFFER_BYTES) / pad.length; i++) log.info({ pad }, 'step')
    const started = Date.now()
    expect(await flushLogger(log, 200)).toBe(false)
    expect(Date.now() - started).toBeLessThan(2000)

    const flushed = flushLogger(log, 5000)
    reader.drain()
    expect(await flushed).toBe(true)
    expect(reader.lines()[reader.lines().length - 1]).toMatch(
      /"level":40,.*"dropped":\d+,"msg":"the log reader stalled/,
    )
  })
})
