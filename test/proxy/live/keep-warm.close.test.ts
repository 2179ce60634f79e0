/**
 * Keep-warm once closed (the serve is stopping): a step that settles after the close starts no
 * idle period, so no ping is sent while the serve goes down. Real timers, a few tens of ms.
 */
import pino from 'pino'
import { KeepWarm, type Warmable } from '../../../proxy/live/keep-warm'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

test('a step that settles after the close is never kept warm; one that settled before is, until the close', async () => {
  const pinged: string[] = []
  const warm = new KeepWarm(
    { afterMs: 20, maxPings: 5, minTokens: 1 },
    async (w) => void pinged.push(w.agent),
    pino({ level: 'silent' }),
  )
  const step = (agent: string): Warmable => ({ ws: 'w', agent, n: 1 }) as Warmable
  warm.started('w', 'open')
  warm.settled(step('open'), 1000)
  await sleep(60)
  expect(pinged).toContain('open')
  warm.started('w', 'late')
  warm.close()
  const before = pinged.length
  warm.settled(step('late'), 1000)
  await sleep(80)
  expect(pinged).toHaveLength(before)
  expect(pinged).not.toContain('late')
})
