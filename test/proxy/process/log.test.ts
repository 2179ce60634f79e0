/** The process logger (proxy/process/log): JSON lines for machines, one readable line for a person at a terminal. */
import { createLogger, readable } from '../../../proxy/process/log'

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
})
