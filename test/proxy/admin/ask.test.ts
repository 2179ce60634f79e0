/**
 * proxy/admin/ask: the one client of the admin surface. No serve running is undefined; a running
 * serve is asked with the home's token and its JSON comes back; an error it answered carries its
 * own message; a serve that does not answer is one sentence naming its URL.
 */
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { AskError, askServe } from '../../../proxy/admin/ask'
import { startProxy, tempHome, type Proxy } from '../../support/harness'

let p: Proxy
beforeAll(async () => {
  p = await startProxy()
})
afterAll(() => p.close())

describe('askServe', () => {
  it('is undefined when no serve runs on the home', async () => {
    const home = tempHome()
    try {
      expect(await askServe(home, '/_holdfast/health')).toBeUndefined()
    } finally {
      fs.rmSync(home, { recursive: true, force: true })
    }
  })

  it('asks the running serve with the home’s token and gives back its JSON', async () => {
    const health = await askServe<{ agents: unknown[] }>(p.home, '/_holdfast/health')
    expect(health?.agents).toEqual(expect.any(Array))
  })

  it('throws the serve’s own message when it refuses', async () => {
    const asked = askServe(p.home, '/_holdfast/recover', { body: { workspace: 'no such ws!' } })
    await expect(asked).rejects.toBeInstanceOf(AskError)
    await expect(asked).rejects.toThrow(/workspace/)
  })

  it('says in one sentence that a serve which does not answer did not, naming its URL', async () => {
    const home = tempHome()
    const silent = net.createServer(() => undefined) // accepts, never answers
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()))
    const url = `http://127.0.0.1:${(silent.address() as net.AddressInfo).port}`
    fs.writeFileSync(
      path.join(home, 'serve.json'),
      JSON.stringify({ url, pid: process.pid, started_at: new Date().toISOString(), home }),
    )
    try {
      await expect(askServe(home, '/_holdfast/health', { timeoutMs: 300 })).rejects.toThrow(
        `holdfast serve at ${url} did not answer: no answer in 300 ms`,
      )
    } finally {
      silent.close()
      fs.rmSync(home, { recursive: true, force: true })
    }
  })
})
