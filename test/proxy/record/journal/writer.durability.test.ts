/**
 * No acknowledged answer is lost: kill -9 0–5 ms after the client read the last byte, and the
 * next start finishes the step from the journal with the whole response, its usage and its real
 * outcome. A step recorded but never sent is `not_sent`; one cut off mid-answer is `interrupted`
 * with its bytes kept. A journal entry that cannot be committed is moved aside and `serve`
 * starts. Trailers reach the client; an error event inside a 200 stream is recorded as an error.
 */
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import { Journal } from '../../../../proxy/record/journal/writer'
import type { StepMeta } from '../../../../generated/meta'
import { startFakeUpstream, type FakeUpstream } from '../../../support/fake-upstream'
import {
  configFor,
  git,
  spawnServe,
  startProxy,
  tempHome,
  writeConfig,
  type Spawned,
} from '../../../support/harness'

const MODEL = 'claude-sonnet-4-5'
const body = (mark: string, stream = false): string =>
  JSON.stringify({ model: MODEL, max_tokens: 16, stream, messages: [{ role: 'user', content: mark }] })

let fake: FakeUpstream
let home: string
let server: Spawned | undefined

beforeAll(async () => {
  fake = await startFakeUpstream()
  home = tempHome()
  writeConfig(home, configFor(fake))
})
afterEach(async () => {
  await server?.kill('SIGKILL')
  server = undefined
})
afterAll(async () => {
  await fake.close()
  fs.rmSync(home, { recursive: true, force: true })
})

const repo = (): string => path.join(home, 'workspaces', 'default', 'repo.git')
const serve = (): Promise<Spawned> => spawnServe(['--home', home, '--port', '0'])
const show = (agent: string, n: string, file: string): Buffer =>
  Buffer.from(git(repo(), 'show', `agents/${agent}:steps/${agent}/${n}/${file}`), 'utf8')

/** POST a step and read the whole answer; resolves once the client has its last byte. */
function step(url: string, agent: string, data: string): Promise<{ status: number; bytes: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}/w/default/a/${agent}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    })
    req.on('response', (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes: Buffer.concat(chunks) }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(data)
  })
}

describe('a kill right after the answer', () => {
  it('loses no answer the client read: killed 0-5 ms after the last byte, JSON and SSE', async () => {
    const rounds: { agent: string; stream: boolean; got: Buffer }[] = []
    for (let delay = 0; delay <= 5; delay++) {
      const stream = delay % 2 === 1
      const agent = `k${delay}`
      server = await serve()
      const r = await step(server.url, agent, body(`round ${delay}`, stream))
      expect(r.status).toBe(200)
      if (delay > 0) await new Promise((res) => setTimeout(res, delay))
      await server.kill('SIGKILL')
      rounds.push({ agent, stream, got: r.bytes })
    }
    server = await serve() // recovery finishes and commits every step before listening
    for (const { agent, stream, got } of rounds) {
      const meta = JSON.parse(show(agent, '001', 'meta.json').toString()) as StepMeta
      expect({ agent, outcome: meta.outcome, status: meta.status }).toEqual({
        agent,
        outcome: 'ok',
        status: 200,
      })
      expect(meta.usage?.output_tokens).toBeGreaterThan(0)
      expect(meta.response_file).toBe(stream ? 'response.sse' : 'response.json')
      expect(show(agent, '001', meta.response_file as string).equals(got)).toBe(true)
      const files = git(repo(), 'ls-tree', '--name-only', `agents/${agent}`, `steps/${agent}/001/`)
      expect(
        files
          .trim()
          .split('\n')
          .map((f) => path.basename(f)),
      ).toEqual(['meta.json', 'request.json', meta.response_file])
    }
  }, 120_000)
})

/** The meta of a crafted step's send half. */
function sendHalf(agent: string, n: number, request: Buffer): StepMeta {
  return {
    version: 1,
    workspace: 'default',
    agent,
    step: String(n).padStart(3, '0'),
    dialect: 'anthropic',
    endpoint: '/v1/messages',
    started_at: new Date().toISOString(),
    route: {
      provider: 'anthropic',
      url: 'http://127.0.0.1:9/v1/messages',
      model: MODEL,
      role: null,
      config_commit: null,
      config_note: null,
      plugin: null,
    },
    request_headers: {},
    cache_keying_headers: {},
    hold: { applied: false, reason: 'first-step', held: [] },
    injected_tools: [],
    changes: [],
    request_bytes: request.length,
  } as unknown as StepMeta
}

/**
 * A journal entry as a serve killed between two of its writes leaves it, written by the journal's
 * own writer: the send half, then (when asked) SENT and the first bytes of an answer.
 */
function craft(
  agent: string,
  n: number,
  opts: { sent?: boolean; answer?: string; meta?: object } = {},
): void {
  const request = Buffer.from(body(`crafted ${agent}`))
  const journal = new Journal(false)
  const entry = journal
    .agent(path.join(home, 'workspaces', 'default', 'journal', agent))
    .send(n, (opts.meta ?? sendHalf(agent, n, request)) as StepMeta, request)
  if (opts.sent) entry.sent()
  if (opts.answer) entry.chunk(Buffer.from(opts.answer))
  journal.close()
}

describe('recovery', () => {
  it('marks a step recorded but never sent as not_sent, and one cut off mid-answer as interrupted with its bytes', async () => {
    craft('never', 1)
    craft('cut', 1, { sent: true, answer: 'event: message_start\ndata: {"type":"mess' })
    server = await serve()
    const never = JSON.parse(show('never', '001', 'meta.json').toString()) as StepMeta
    expect(never).toMatchObject({ outcome: 'not_sent', status: null, error: { code: 'NOT_SENT' } })
    const cut = JSON.parse(show('cut', '001', 'meta.json').toString()) as StepMeta
    expect(cut).toMatchObject({
      outcome: 'interrupted',
      response_file: 'response.txt',
      error: { code: 'INTERRUPTED' },
    })
    expect(show('cut', '001', 'response.txt').toString()).toBe('event: message_start\ndata: {"type":"mess')
    // Everything is committed: the journal starts empty (but for the reserve earlier steps made).
    const left = fs.readdirSync(path.join(home, 'workspaces', 'default', 'journal'))
    expect(left.filter((f) => f !== '.reserve')).toEqual([])
  })

  it('moves aside only an agent whose name can never be a branch, commits a step whose send half names no route as it is, and starts', async () => {
    const long = 'a'.repeat(251) // a name an older version accepted: its ref lock cannot exist
    craft(long, 1)
    craft('ok1', 1)
    // A step whose send half names no route cannot be finished: it is kept as journaled, not dropped.
    craft('broken', 1, { meta: { version: 1, step: '001' } })
    craft('broken', 2)
    server = await serve()
    expect(server.stderr()).toMatch(/step 001 moved aside: .*bytes of UTF-8/)
    const q = path.join(home, 'quarantine', 'default')
    expect(fs.readFileSync(path.join(q, long, '001', 'reason.txt'), 'utf8')).toMatch(/bytes of UTF-8/)
    expect(fs.readFileSync(path.join(q, long, '001', 'request.json'), 'utf8')).toBe(body(`crafted ${long}`))
    expect(fs.existsSync(path.join(home, 'workspaces', 'default', 'journal', long))).toBe(false)
    // Both of broken's steps are on its branch, the first with the send half it has (no route).
    expect(JSON.parse(show('broken', '001', 'meta.json').toString())).toMatchObject({
      step: '001',
      outcome: 'not_sent',
    })
    expect(git(repo(), 'log', '-1', '--format=%s', 'agents/broken~1')).toMatch(/^step 001: unknown model/)
    expect(JSON.parse(show('broken', '002', 'meta.json').toString())).toMatchObject({ outcome: 'not_sent' })
    // The good agent was committed beside them; serve answers.
    expect(JSON.parse(show('ok1', '001', 'meta.json').toString())).toMatchObject({ outcome: 'not_sent' })
    const r = await step(server.url, 'ok1', body('after recovery'))
    expect(r.status).toBe(200)
  })
})

describe('streams', () => {
  it('forwards the provider’s trailers to the client', async () => {
    const p = await startProxy({ fake })
    try {
      fake.enqueue({ trailers: { 'x-request-cost': '42' } })
      const trailers = await new Promise<NodeJS.Dict<string>>((resolve, reject) => {
        const req = http.request(`${p.url}/v1/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
        })
        req.on('response', (res) => {
          res.resume()
          res.on('end', () => resolve(res.trailers))
        })
        req.on('error', reject)
        req.end(body('trailers', true))
      })
      expect(trailers['x-request-cost']).toBe('42')
    } finally {
      await p.close()
    }
  })

  it('records a 200 stream carrying an error event as an upstream error, not ok', async () => {
    const p = await startProxy({ fake })
    try {
      fake.enqueue({
        headers: { 'content-type': 'text/event-stream' },
        body:
          'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":3,"output_tokens":0}}}\n\n' +
          'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n',
      })
      const r = await fetch(`${p.url}/w/default/a/streamerr/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
        body: body('overloaded', true),
      })
      expect(r.status).toBe(200)
      await r.text()
      await p.settled()
      const meta = JSON.parse(
        git(p.repo(), 'show', 'agents/streamerr:steps/streamerr/001/meta.json'),
      ) as StepMeta
      expect(meta).toMatchObject({
        status: 200,
        outcome: 'upstream_error',
        error: {
          code: 'UPSTREAM_STREAM_ERROR',
          message: expect.stringContaining('overloaded_error: Overloaded'),
        },
      })
    } finally {
      await p.close()
    }
  })

  it('records and answers as usual with journal.fsync on', async () => {
    const p = await startProxy({ fake, config: { journal: { fsync: true } } })
    try {
      for (const stream of [false, true]) {
        const r = await fetch(`${p.url}/w/default/a/synced/v1/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
          body: body(`synced ${stream}`, stream),
        })
        expect(r.status).toBe(200)
        await r.text()
      }
      await p.settled()
      const meta = JSON.parse(git(p.repo(), 'show', 'agents/synced:steps/synced/002/meta.json')) as StepMeta
      expect(meta).toMatchObject({ outcome: 'ok', response_file: 'response.sse' })
    } finally {
      await p.close()
    }
  })
})
