/**
 * `holdfast serve` as a user runs it (spawned, through the swc hook): the listening line,
 * serve.json (0600) and the default holdfast.yaml; one serve per home (a dead holder's lock is
 * taken over, and so is one whose pid now names another live process); one-line refusals to
 * start; SIGTERM finishes the step in flight, then exits 0 — waiting at most
 * `timeouts.shutdown_ms` for a provider that never answers, and not at all after a second signal.
 */
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { execFileSync, spawnSync } from 'node:child_process'
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream'
import { configFor, eventually, spawnServe, tempHome, writeConfig, type Spawned } from '../support/harness'
import { branchShape, cliAsync, expectedSubjects, type Run } from '../support/repo-checks'

const execGit = (repo: string, ...args: string[]): string =>
  execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8' })

let fake: FakeUpstream
const homes: string[] = []
const running: Spawned[] = []

beforeAll(async () => {
  fake = await startFakeUpstream()
})
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.kill('SIGKILL')))
})
afterAll(async () => {
  await fake.close()
  for (const h of homes) fs.rmSync(h, { recursive: true, force: true })
})

/** A fresh home; with `configured`, its holdfast.yaml points at the fake upstream. */
function home(configured = true): string {
  const h = tempHome()
  homes.push(h)
  if (configured) writeConfig(h, configFor(fake))
  return h
}

async function serve(h: string, ...extra: string[]): Promise<Spawned> {
  const s = await spawnServe(['--home', h, '--port', '0', ...extra])
  running.push(s)
  return s
}

/** A serve that must refuse to start: its exit and output (killed after 15 s if it serves). */
const refused = (h: string, ...extra: string[]): Promise<Run> =>
  cliAsync(['serve', '--home', h, ...extra], { HOLDFAST_TOKEN: '' })

/** The refusal is exactly one line on stderr, nothing on stdout, and a non-zero exit. */
function oneLine(r: Run): string {
  expect(r.signal).toBeNull()
  expect(r.code).not.toBe(0)
  expect(r.stdout).toBe('')
  const lines = r.stderr.trimEnd().split('\n')
  expect(lines).toHaveLength(1)
  return lines[0]!
}

it('prints the listening line first, writes serve.json 0600 and a default holdfast.yaml', async () => {
  const h = home(false)
  const s = await serve(h)
  expect(s.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
  const file = path.join(h, 'serve.json')
  expect(fs.statSync(file).mode & 0o777).toBe(0o600)
  expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toMatchObject({ url: s.url, pid: s.child.pid })
  const yaml = fs.readFileSync(path.join(h, 'holdfast.yaml'), 'utf8')
  expect(yaml).toContain('listen: {host: 127.0.0.1, port: 8787}')
  expect(yaml).toContain('defaults: {workspace: default, agent: main}')
  expect(yaml).toContain('anthropic: {dialect: anthropic, base_url: https://api.anthropic.com}')
  expect(yaml).toContain('openai:    {dialect: openai,    base_url: https://api.openai.com/v1}')
  const health = await fetch(`${s.url}/_holdfast/health`)
  expect(health.status).toBe(200)
  // It says where it wrote the new holdfast.yaml and where each provider row points (JSON lines: stderr is no terminal).
  await eventually(() => s.stderr().includes('providers:'), 10_000, 'the serving line')
  const said = s
    .stderr()
    .trim()
    .split('\n')
    .map((l) => (JSON.parse(l) as { msg: string }).msg)
  expect(said).toContain(`wrote a new holdfast.yaml at ${path.join(h, 'holdfast.yaml')}`)
  expect(said.join('\n')).toContain(
    'providers: anthropic → https://api.anthropic.com, openai → https://api.openai.com/v1',
  )

  // One serve per home: a second one refuses, naming the first one's pid.
  const line = oneLine(await refused(h, '--port', '0'))
  expect(line).toContain(`pid ${s.child.pid}`)
  expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toMatchObject({ pid: s.child.pid })
})

it('takes over a lock whose holder is dead', async () => {
  const h = home()
  const dead = spawnSync(process.execPath, ['-e', 'process.pid']).pid
  fs.writeFileSync(path.join(h, 'serve.lock'), `${dead}\n`)
  const s = await serve(h)
  expect(fs.readFileSync(path.join(h, 'serve.lock'), 'utf8').split('\n')[0]).toBe(String(s.child.pid))
  expect(JSON.parse(fs.readFileSync(path.join(h, 'serve.json'), 'utf8')).pid).toBe(s.child.pid)
  expect(fs.readdirSync(h).filter((f) => f.startsWith('serve.lock'))).toEqual(['serve.lock'])
})

;(process.platform === 'linux' ? it : it.skip)(
  'takes over a lock whose pid was given to another live process since (a serve killed, its pid reused)',
  async () => {
    const h = home()
    // This jest worker is alive, and is no serve: the lock says a process that started earlier held it.
    const start = Number(fs.readFileSync(`/proc/${process.pid}/stat`, 'utf8').split(') ')[1]?.split(' ')[19])
    fs.writeFileSync(path.join(h, 'serve.lock'), `${process.pid}\n${start - 1}\n`)
    const s = await serve(h)
    expect(fs.readFileSync(path.join(h, 'serve.lock'), 'utf8').split('\n')[0]).toBe(String(s.child.pid))
  },
)

it('refuses to start with one line: port in use, bad holdfast.yaml, public host without a token', async () => {
  const blocker = net.createServer()
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r))
  const port = (blocker.address() as net.AddressInfo).port
  try {
    const portHome = home()
    const unknownKey = home()
    fs.writeFileSync(
      path.join(unknownKey, 'holdfast.yaml'),
      'listen: {host: 127.0.0.1, port: 8787, colour: blue}\n',
    )
    const wrongType = home()
    fs.writeFileSync(path.join(wrongType, 'holdfast.yaml'), 'listen: {host: 127.0.0.1, port: eighty}\n')
    const publicHome = home()
    const [inUse, unknown, wrong, open] = await Promise.all([
      refused(portHome, '--port', String(port)),
      refused(unknownKey, '--port', '0'),
      refused(wrongType, '--port', '0'),
      refused(publicHome, '--host', '0.0.0.0', '--port', '0'),
    ])
    expect(oneLine(inUse)).toContain(`port ${port}`)
    // A refused start leaves neither the lock nor serve.json behind.
    expect(fs.existsSync(path.join(portHome, 'serve.lock'))).toBe(false)
    expect(fs.existsSync(path.join(portHome, 'serve.json'))).toBe(false)
    const u = oneLine(unknown)
    expect(u).toContain(path.join(unknownKey, 'holdfast.yaml'))
    expect(u).toContain('colour')
    const w = oneLine(wrong)
    expect(w).toContain(path.join(wrongType, 'holdfast.yaml'))
    expect(w).toContain('listen.port')
    expect(oneLine(open)).toMatch(/0\.0\.0\.0.*token/)
  } finally {
    await new Promise((r) => blocker.close(r))
  }
})

it('on SIGTERM finishes the step in flight, commits it, removes serve.json and exits 0', async () => {
  const h = home()
  const s = await serve(h)
  fake.reset()
  fake.enqueue({ delayMs: 500 })
  const answer = fetch(`${s.url}/w/default/a/term/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({
      model: 'claude-sonnet-4-5',
      max_tokens: 8,
      messages: [{ role: 'user', content: 'hi' }],
    }),
  }).then(async (r) => ({ status: r.status, body: await r.text() }))
  await eventually(() => fake.received.length === 1, 20_000, 'the step to be sent')
  const exited = s.kill('SIGTERM')
  running.length = 0
  const res = await answer
  expect(res.status).toBe(200)
  expect(JSON.parse(res.body)).toMatchObject({ type: 'message', stop_reason: 'end_turn' })
  expect(await exited).toBe(0)
  expect(fs.existsSync(path.join(h, 'serve.json'))).toBe(false)
  expect(fs.existsSync(path.join(h, 'serve.lock'))).toBe(false)
  const repo = path.join(h, 'workspaces', 'default', 'repo.git')
  expect((await branchShape(repo, 'term')).subjects).toEqual(expectedSubjects('term', 1, 'claude-sonnet-4-5'))
  // One info line for the step: who, which step, status, time to first byte, the cache, the hold.
  const step = s
    .stderr()
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .find((e) => e.step === '001')
  expect(step).toMatchObject({ level: 30, ws: 'default', agent: 'term', status: 200, hold: 'first-step' })
  expect(step?.msg).toMatch(
    /^default\/term 001 200 ttfb \d+(\.\d+)? ms, cache read \d+ write \d+, hold: first-step$/,
  )
})

/** A step to `agent` that the fake will not answer, once sent; `answer` resolves with the client's status. */
async function hungStep(url: string, agent: string): Promise<{ answer: Promise<number> }> {
  fake.reset()
  fake.enqueue({ hang: true })
  const answer = fetch(`${url}/w/default/a/${agent}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({
      model: 'claude-fake-1',
      max_tokens: 8,
      messages: [{ role: 'user', content: 'hi' }],
    }),
  }).then((r) => r.status)
  await eventually(() => fake.received.length === 1, 20_000, 'the step to be sent')
  return { answer }
}

const outcome = (h: string, agent: string): unknown =>
  JSON.parse(
    execGit(
      path.join(h, 'workspaces', 'default', 'repo.git'),
      'show',
      `agents/${agent}:steps/${agent}/001/meta.json`,
    ),
  )

it('on SIGTERM waits at most timeouts.shutdown_ms for a provider that never answers, then records the step as interrupted', async () => {
  const h = tempHome()
  homes.push(h)
  writeConfig(h, configFor(fake, { timeouts: { shutdown_ms: 500 } }))
  const s = await serve(h)
  const { answer } = await hungStep(s.url, 'hung')
  const t0 = Date.now()
  const exited = s.kill('SIGTERM')
  running.length = 0
  expect(await answer).toBe(503)
  expect(await exited).toBe(0)
  expect(Date.now() - t0).toBeLessThan(20_000) // not the provider's 600 s
  expect(outcome(h, 'hung')).toMatchObject({ outcome: 'interrupted', error: { code: 'SHUTDOWN_TIMEOUT' } })
  expect(s.stderr()).toContain('stopped waiting after 500 ms: 1 request in flight aborted')
})

it('on a second SIGTERM cuts the steps in flight at once', async () => {
  const h = home() // the default bound: 20 s
  const s = await serve(h)
  const { answer } = await hungStep(s.url, 'twice')
  const exited = s.kill('SIGTERM')
  running.length = 0
  await eventually(
    () => s.stderr().includes('finishing in-flight steps'),
    20_000,
    'the first signal to be seen',
  )
  const t0 = Date.now()
  s.child.kill('SIGTERM')
  expect(await answer).toBe(503)
  expect(await exited).toBe(0)
  expect(Date.now() - t0).toBeLessThan(15_000)
  expect(outcome(h, 'twice')).toMatchObject({ outcome: 'interrupted', error: { code: 'SHUTDOWN_TIMEOUT' } })
})
