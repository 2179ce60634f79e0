/**
 * The process logger (proxy/process/log) under a stalled reader: `holdfast serve` spawned with its
 * stderr a pipe nobody drains (a supervisor that started it and reads nothing) keeps answering —
 * every step and `/_holdfast/health` — while the log drops what the pipe cannot take; once the
 * pipe drains, one line says how many entries were dropped; and SIGTERM still exits in time.
 */
import fs from 'node:fs'
import path from 'node:path'
import readline from 'node:readline'
import { spawn, type ChildProcess } from 'node:child_process'
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream'
import { CLI, configFor, knowToken, REGISTER, ROOT, tempHome, writeConfig } from '../../support/harness'

const STEPS = 2000
/** Steps in flight at once. */
const PARALLEL = 4

let fake: FakeUpstream
const homes: string[] = []
const children: ChildProcess[] = []

beforeAll(async () => {
  fake = await startFakeUpstream()
})
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
})
afterAll(async () => {
  await fake.close()
  for (const h of homes) fs.rmSync(h, { recursive: true, force: true })
})

interface Serve {
  child: ChildProcess
  url: string
  exited: Promise<number | null>
}

/** `holdfast serve` with its stderr a pipe this test does not read (paused: nothing past Node's first read). */
async function serveUnread(): Promise<Serve> {
  const home = tempHome()
  homes.push(home)
  writeConfig(home, configFor(fake))
  const child = spawn(process.execPath, ['-r', REGISTER, CLI, 'serve', '--home', home, '--port', '0'], {
    cwd: ROOT,
    env: { ...process.env, HOLDFAST_LOG_LEVEL: 'debug' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.push(child)
  child.stderr?.pause()
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)))
  const line = await new Promise<string>((resolve, reject) => {
    const rl = readline.createInterface({ input: child.stdout as NodeJS.ReadableStream })
    rl.once('line', resolve)
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}`)))
  })
  const url = /^holdfast listening on (http:\/\/\S+)$/.exec(line)?.[1]
  if (!url) throw new Error(`unexpected first line: ${line}`)
  knowToken(url, home)
  return { child, url, exited }
}

/** One small anthropic step; true when it is answered 200 within the time limit. */
async function step(url: string, n: number): Promise<boolean> {
  try {
    const r = await fetch(`${url}/w/default/a/stall/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({
        model: 'claude-sonnet-4-5',
        max_tokens: 8,
        messages: [{ role: 'user', content: `hi ${n}` }],
      }),
      signal: AbortSignal.timeout(10_000),
    })
    await r.text()
    return r.status === 200
  } catch {
    return false
  }
}

/** Send `count` steps, PARALLEL at a time; the number of the first one not answered, or undefined. */
async function steps(url: string, count: number): Promise<number | undefined> {
  let next = 0
  let failed: number | undefined
  const lane = async (): Promise<void> => {
    while (failed === undefined && next < count) {
      const n = ++next
      if (!(await step(url, n))) failed = Math.min(failed ?? n, n)
    }
  }
  await Promise.all(Array.from({ length: PARALLEL }, lane))
  return failed
}

/** Read the paused stderr from now on, until a line matches `re` (or `ms` pass). */
function drainUntil(child: ChildProcess, re: RegExp, ms: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const rl = readline.createInterface({ input: child.stderr as NodeJS.ReadableStream })
    const timer = setTimeout(() => resolve(undefined), ms)
    rl.on('line', (l) => {
      if (!re.test(l)) return
      clearTimeout(timer)
      resolve(l)
    })
    child.stderr?.resume()
  })
}

it('answers every step and the health check while its log reader stalls, then says how many entries it dropped', async () => {
  const s = await serveUnread()
  const unanswered = await steps(s.url, STEPS)
  const health = await fetch(`${s.url}/_holdfast/health`, { signal: AbortSignal.timeout(10_000) }).catch(
    () => undefined,
  )
  expect({ unanswered, health: health?.status }).toEqual({ unanswered: undefined, health: 200 })
  const said = await drainUntil(s.child, /entries were dropped/, 10_000)
  expect(said).toBeDefined()
  const entry = JSON.parse(said as string) as { level: number; dropped: number; msg: string }
  expect(entry.level).toBe(40)
  expect(entry.dropped).toBeGreaterThan(0)
  expect(entry.msg).toBe(`the log reader stalled: ${entry.dropped} entries were dropped`)
  s.child.kill('SIGTERM')
  expect(await s.exited).toBe(0)
  expect(fs.existsSync(path.join(homes[homes.length - 1] as string, 'serve.json'))).toBe(false)
}, 120_000)

it('exits 0 on SIGTERM while its log reader is still stalled (the last flush waits at most FLUSH_MS)', async () => {
  const s = await serveUnread()
  expect(await steps(s.url, STEPS / 4)).toBeUndefined()
  const asked = Date.now()
  s.child.kill('SIGTERM')
  expect(await s.exited).toBe(0)
  expect(Date.now() - asked).toBeLessThan(15_000)
}, 60_000)
