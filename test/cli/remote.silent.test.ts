/**
 * `holdfast remote set` against a remote that accepts the connection and never answers (a
 * loopback TCP server that reads and says nothing): set returns once its probe's time limit is
 * up, and says that limit, the one it waited, in its line.
 */
import net from 'node:net'
import { startProxy, type Proxy } from '../support/harness'
import { runCli } from './inprocess.support'

const TIMEOUT_S = 2
let p: Proxy
let silent: net.Server
const held: net.Socket[] = []
let port: number

beforeAll(async () => {
  p = await startProxy({ config: { machine: 'm', remote: { timeout_s: TIMEOUT_S, fetch_interval_s: 0 } } })
  const r = await fetch(`${p.url}/w/default/a/main/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({
      model: 'claude-fake-1',
      max_tokens: 8,
      messages: [{ role: 'user', content: 'hi' }],
    }),
  })
  await r.arrayBuffer()
  await p.settled()
  silent = net.createServer((s) => {
    held.push(s)
    s.on('error', () => undefined)
    s.resume() // reads the request, answers nothing
  })
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
  port = (silent.address() as net.AddressInfo).port
})
afterAll(async () => {
  for (const s of held) s.destroy()
  await new Promise((resolve) => silent.close(resolve))
  await p.close()
})

it('says the time limit it waited for a remote that never answers, and returns after it', async () => {
  const t0 = Date.now()
  const r = await runCli(['remote', 'set', 'default', `http://127.0.0.1:${port}/team.git`, '--home', p.home])
  const took = Date.now() - t0
  expect(r.code).toBe(0)
  expect(r.stdout).toContain(
    `the remote does not answer yet (git went ${TIMEOUT_S} s without finishing or progress and was stopped): pushes are retried until it does`,
  )
  expect(held.length).toBeGreaterThan(0) // the remote was reached, and stayed silent
  expect(took).toBeGreaterThanOrEqual(TIMEOUT_S * 1000)
  expect(took).toBeLessThan(TIMEOUT_S * 1000 + 15_000)
}, 60_000)
