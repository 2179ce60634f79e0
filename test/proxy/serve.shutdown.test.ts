/**
 * A bounded shutdown (issue 28): `close` waits for in-flight steps at most `timeouts.shutdown_ms`,
 * then aborts them. A step the provider has not answered is recorded as `interrupted` with
 * `SHUTDOWN_TIMEOUT` and its client answered 503 `SHUTTING_DOWN` in its dialect's envelope; a step
 * mid-stream is cut, recorded `interrupted` with the bytes that arrived; a body still arriving is
 * refused; a step that ends within the bound is untouched. Every step is committed before close
 * resolves.
 */
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import { silentLogger } from '../../proxy/process/log'
import { startServer, type RunningServer } from '../../proxy/serve'
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream'
import { configFor, git, tempHome, writeConfig } from '../support/harness'

let fake: FakeUpstream
let home: string
let s: RunningServer | undefined
beforeAll(async () => {
  fake = await startFakeUpstream()
})
afterAll(() => fake.close())
beforeEach(async () => {
  home = tempHome()
  fake.reset()
  writeConfig(home, configFor(fake, { timeouts: { shutdown_ms: 400 } }))
  s = await startServer({ home, port: 0, log: silentLogger() })
})
afterEach(async () => {
  await s?.close()
  fs.rmSync(home, { recursive: true, force: true })
})

const repo = () => path.join(home, 'workspaces', 'default', 'repo.git')
const meta = (agent: string, step = '001') =>
  JSON.parse(git(repo(), 'show', `agents/${agent}:steps/${agent}/${step}/meta.json`)) as {
    outcome: string
    status: number | null
    error: { code: string } | null
  }

/** A step to `agent`, read to its end (or its cut); resolves with what the client saw. */
function step(
  agent: string,
  body: object,
  onHead?: () => void,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string; cut: boolean }> {
  const bytes = JSON.stringify(body)
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${(s as RunningServer).url}/w/default/a/${agent}/v1/messages`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      },
      (res) => {
        onHead?.()
        let text = ''
        res.on('data', (c: Buffer) => (text += c.toString()))
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text, cut: false }),
        )
        res.on('error', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text, cut: true }),
        )
        res.on('aborted', () => undefined)
      },
    )
    req.on('error', reject)
    req.end(bytes)
  })
}

const ask = (text: string, stream = false) => ({
  model: 'claude-fake-1',
  max_tokens: 8,
  stream,
  messages: [{ role: 'user', content: text }],
})

async function until(check: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 20_000
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

describe('a bounded shutdown', () => {
  it('stops waiting for a provider that never answers: 503 to the client, the step committed as interrupted', async () => {
    fake.enqueue({ hang: true })
    const answer = step('hung', ask('never answered'))
    await until(() => fake.received.length === 1, 'the provider to receive the step')
    const t0 = Date.now()
    await (s as RunningServer).close()
    const took = Date.now() - t0
    s = undefined
    const r = await answer
    expect([r.status, r.headers['x-holdfast-error']]).toEqual([503, 'SHUTTING_DOWN'])
    expect(JSON.parse(r.body)).toEqual({
      type: 'error',
      error: { type: 'overloaded_error', message: expect.stringContaining('shutting down') },
    })
    expect(took).toBeGreaterThanOrEqual(390)
    expect(took).toBeLessThan(15_000) // 400 ms, then the abort and the commit: not the provider's 600 s
    expect(meta('hung')).toMatchObject({ outcome: 'interrupted', error: { code: 'SHUTDOWN_TIMEOUT' } })
    await until(() => fake.aborted === 1, 'the provider call to be aborted')
  })

  it('cuts a step mid-stream and records it as interrupted with what arrived', async () => {
    fake.enqueue({ chunkDelayMs: 60_000 })
    let headed = false
    const answer = step('streaming', ask('a long answer', true), () => (headed = true))
    await until(() => headed, 'the answer to begin')
    await (s as RunningServer).close()
    s = undefined
    const r = await answer
    expect([r.status, r.cut]).toEqual([200, true])
    expect(r.body).toContain('event: message_start')
    const m = meta('streaming')
    expect(m).toMatchObject({ outcome: 'interrupted', status: 200, error: { code: 'SHUTDOWN_TIMEOUT' } })
    const files = git(repo(), 'ls-tree', '--name-only', 'agents/streaming', 'steps/streaming/001/')
    const answered = files.split('\n').find((f) => /response\./.test(f)) as string
    expect(git(repo(), 'show', `agents/streaming:${answered}`)).toContain('event: message_start')
  })

  it('refuses a body still arriving when the bound passes', async () => {
    const req = http.request(`${(s as RunningServer).url}/w/default/a/slow/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': 100 },
    })
    const answered = new Promise<http.IncomingMessage>((resolve, reject) => {
      req.on('response', resolve)
      req.on('error', reject)
    })
    req.write('{"model":')
    await until(() => (s as RunningServer).ctx.inflight.size === 1, 'the step to be in flight')
    const closing = (s as RunningServer).close()
    const res = await answered
    expect([res.statusCode, res.headers['x-holdfast-error']]).toEqual([503, 'SHUTTING_DOWN'])
    res.resume()
    req.destroy()
    await closing
    s = undefined
    expect(fake.received).toHaveLength(0)
  })

  it('leaves a step that ends within the bound untouched', async () => {
    fake.enqueue({ delayMs: 100 })
    const answer = step('quick', ask('soon answered'))
    await until(() => fake.received.length === 1, 'the provider to receive the step')
    await (s as RunningServer).close()
    s = undefined
    expect((await answer).status).toBe(200)
    expect(meta('quick')).toMatchObject({ outcome: 'ok', status: 200, error: null })
  })
})
