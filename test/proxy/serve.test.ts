/**
 * proxy/serve.ts, `holdfast serve` as a function: an off-loopback bind needs a token (refused
 * before the home is touched); a running serve holds the home lock and `serve.json` (its url,
 * pid, home); a workspace that cannot be recovered is logged and skipped, never stopping the
 * start; a start that fails after the plugins loaded closes them and frees the home; `close`
 * finishes the steps in flight and commits them, then closes the plugins, stops listening and
 * removes the lock and `serve.json`, once however often it is called.
 */
import fs from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { Writable } from 'node:stream'
import pino from 'pino'
import type { AnyPlugin } from '../../plugins/instance'
import { silentLogger } from '../../proxy/process/log'
import { startServer } from '../../proxy/serve'
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream'
import { configFor, git, tempHome, writeConfig } from '../support/harness'

let fake: FakeUpstream
let home: string
const savedToken = process.env.HOLDFAST_TOKEN
beforeAll(async () => {
  fake = await startFakeUpstream()
  delete process.env.HOLDFAST_TOKEN
})
afterAll(async () => {
  await fake.close()
  if (savedToken !== undefined) process.env.HOLDFAST_TOKEN = savedToken
})
beforeEach(() => {
  home = tempHome()
  fake.reset()
})
afterEach(() => fs.rmSync(home, { recursive: true, force: true }))

const lockFile = () => path.join(home, 'serve.lock')
const infoFile = () => path.join(home, 'serve.json')
const ask = (text: string) =>
  JSON.stringify({ model: 'claude-fake-1', max_tokens: 8, messages: [{ role: 'user', content: text }] })
const post = (url: string, text: string) =>
  fetch(`${url}/w/default/a/main/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: ask(text),
  })

/** A logger whose lines are kept, parsed. */
function capture(): { log: pino.Logger; lines: { level: number; msg: string; ws?: string; err?: string }[] } {
  const lines: { level: number; msg: string; ws?: string; err?: string }[] = []
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as (typeof lines)[number])
      done()
    },
  })
  return { log: pino({ level: 'info' }, sink), lines }
}

describe('before anything is touched', () => {
  it('refuses to bind off loopback without a token, taking no lock', async () => {
    writeConfig(home, configFor(fake))
    await expect(startServer({ home, host: '0.0.0.0', port: 0, log: silentLogger() })).rejects.toThrow(
      'binding 0.0.0.0 (off loopback) requires a token: set token in holdfast.yaml or HOLDFAST_TOKEN',
    )
    expect(fs.readdirSync(home)).toEqual(['holdfast.yaml'])
  })
})

describe('a running serve', () => {
  it('holds the home lock and writes serve.json (url, pid, home; mode 0600), an IPv6 host in brackets', async () => {
    writeConfig(home, configFor(fake))
    const s = await startServer({ home, host: '::1', port: 0, log: silentLogger() })
    try {
      expect(s.url).toBe(`http://[::1]:${s.port}`)
      const info = JSON.parse(fs.readFileSync(infoFile(), 'utf8')) as Record<string, unknown>
      expect(info).toEqual({ url: s.url, pid: process.pid, started_at: expect.any(String), home })
      expect(fs.statSync(infoFile()).mode & 0o777).toBe(0o600)
      expect(fs.readFileSync(lockFile(), 'utf8').split('\n')[0]).toBe(String(process.pid))
      expect((await fetch(`${s.url}/`, { method: 'HEAD' })).status).toBe(200)
    } finally {
      await s.close()
    }
  })

  it('logs a workspace that cannot be recovered and serves the others', async () => {
    writeConfig(home, configFor(fake))
    fs.mkdirSync(path.join(home, 'workspaces', 'broken'), { recursive: true })
    fs.writeFileSync(path.join(home, 'workspaces', 'broken', 'repo.git'), 'not a repository')
    const { log, lines } = capture()
    const s = await startServer({ home, port: 0, log })
    try {
      expect(lines.filter((l) => l.level >= 50).map(({ msg, ws }) => ({ msg, ws }))).toEqual([
        { msg: 'workspace broken could not be recovered; serving without recovering it', ws: 'broken' },
      ])
      expect((await post(s.url, 'still served')).status).toBe(200)
    } finally {
      await s.close()
    }
  })
})

describe('a start that fails late', () => {
  it('closes the plugins that started and frees the home when the port is taken', async () => {
    const taken = http.createServer()
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', () => r()))
    const port = (taken.address() as AddressInfo).port
    const closed: string[] = []
    const plugins: Record<string, AnyPlugin> = {
      watcher: {
        name: 'watcher',
        apiVersion: 1,
        setup: () => ({ close: () => void closed.push('watcher') }),
      },
    }
    try {
      writeConfig(home, configFor(fake, { plugins: ['watcher'] }))
      await expect(startServer({ home, port, log: silentLogger(), plugins })).rejects.toThrow(
        `port ${port} on 127.0.0.1 is already in use`,
      )
      expect(closed).toEqual(['watcher'])
      expect([fs.existsSync(lockFile()), fs.existsSync(infoFile())]).toEqual([false, false])
    } finally {
      await new Promise<void>((r) => taken.close(() => r()))
    }
    const again = await startServer({ home, port: 0, log: silentLogger(), plugins })
    await again.close()
  })
})

describe('close', () => {
  it('finishes and commits the step in flight, then closes the plugins, stops listening and frees the home', async () => {
    const events: string[] = []
    const plugins: Record<string, AnyPlugin> = {
      watcher: {
        name: 'watcher',
        apiVersion: 1,
        setup: () => ({
          onResponse: (ex) => void events.push(`onResponse ${ex.response?.step}`),
          close: () => void events.push('close'),
        }),
      },
    }
    writeConfig(home, configFor(fake, { plugins: ['watcher'] }))
    const s = await startServer({ home, port: 0, log: silentLogger(), plugins })
    fake.enqueue({ delayMs: 300 })
    const answer = post(s.url, 'in flight')
    while (fake.received.length === 0) await new Promise((r) => setTimeout(r, 10))
    const closing = s.close()
    expect(s.close()).toBe(closing) // once, however often it is called
    const r = await answer
    expect([r.status, ((await r.json()) as { type: string }).type]).toEqual([200, 'message'])
    await closing
    expect(events).toEqual(['onResponse 001', 'close'])
    const repo = path.join(home, 'workspaces', 'default', 'repo.git')
    expect(git(repo, 'log', '--format=%s', 'agents/main').trim()).toMatch(/^step 001/)
    expect([fs.existsSync(lockFile()), fs.existsSync(infoFile())]).toEqual([false, false])
    await expect(fetch(`${s.url}/`, { method: 'HEAD' })).rejects.toThrow()
  })
})
