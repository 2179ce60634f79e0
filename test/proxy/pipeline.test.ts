/**
 * proxy/pipeline.ts, one request's lifecycle through a real proxy and fake upstream: identify,
 * then route (shown the route resolve computed, asked once), the record written before the send,
 * then onResponse with the step; what each stage refuses with, in the dialect's envelope, and
 * what a refusal leaves (accept: nothing asked, nothing written; resolve: no route asked;
 * record: nothing sent); a closing server takes no new step; a body over the limit closes the
 * connection; count_tokens numbers nothing; a pass-through never enters the pipeline; concurrent
 * steps of one agent are numbered without gaps. Forwarding fidelity is forward.fidelity's.
 */
import fs from 'node:fs'
import path from 'node:path'
import type { Exchange, FailureView } from '../../plugins/api'
import type { AnyPlugin } from '../../plugins/instance'
import { readJournal } from '../../proxy/record/journal/reader'
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream'
import { git, startProxy, type Proxy } from '../support/harness'
import { postAnthropic, rawRequest } from '../support/raw-http'

/** Every hook call and every request reaching the provider, in order. */
const events: string[] = []
const where = (ex: Exchange) => `${ex.workspace}/${ex.agent}`

const observer: AnyPlugin = {
  name: 'observer',
  apiVersion: 1,
  setup: () => ({
    identify(ex) {
      events.push(`identify ${where(ex)} route=${JSON.stringify(ex.route)}`)
      const to = ex.headers['x-test-move']
      return to ? { agent: to } : undefined
    },
    route(ex) {
      events.push(`route ${where(ex)} ${ex.route?.provider}/${ex.route?.model}`)
      const model = ex.headers['x-test-model']
      return model ? { model, why: 'asked' } : undefined
    },
    onResponse: (ex) =>
      void events.push(
        `onResponse ${where(ex)} step=${ex.response?.step} ${ex.response?.status} ${ex.route?.model}`,
      ),
    onError: (ex, err: FailureView) => void events.push(`onError ${where(ex)} ${err.code}`),
  }),
}

let fake: FakeUpstream
let p: Proxy
/** What the journal held for the agent at each moment the provider received a request. */
const journalAtSend: { agent: string; steps: number[] }[] = []
beforeAll(async () => {
  fake = await startFakeUpstream({
    onReceived: (r) => {
      events.push(`upstream ${r.url}`)
      const m = /"content":"([^"]*)"/.exec(r.body.toString())
      const agent = m?.[1]?.startsWith('agent:') ? m[1].slice('agent:'.length) : undefined
      if (agent) {
        const dir = path.join(p.home, 'workspaces', 'life', 'journal', agent)
        journalAtSend.push({ agent, steps: [...readJournal(dir).steps.keys()] })
      }
    },
  })
  p = await startProxy({
    fake,
    config: { plugins: ['observer'], limits: { body_bytes: 4096 } } as never,
    plugins: { observer },
  })
})
afterAll(async () => {
  await p.close()
  await fake.close()
})
beforeEach(async () => {
  await p.settled()
  events.length = 0
  fake.reset()
})

const body = (content: string, extra = '') =>
  `{"model":"claude-fake-1","max_tokens":8${extra},"messages":[{"role":"user","content":"${content}"}]}`
const wsDir = (ws: string) => path.join(p.home, 'workspaces', ws)
const steps = (ws: string, agent: string): string[] => {
  try {
    return git(p.repo(ws), 'ls-tree', '--name-only', `agents/${agent}`, `steps/${agent}/`)
      .split('\n')
      .filter(Boolean)
      .map((s) => s.slice(`steps/${agent}/`.length))
  } catch {
    return []
  }
}
/** Run `fn` while every synchronous write of this thread fails as on a full disk. */
async function withFullDisk<T>(fn: () => Promise<T>): Promise<T> {
  const enospc = (): never => {
    throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })
  }
  const spies = [jest.spyOn(fs, 'writevSync'), jest.spyOn(fs, 'writeSync'), jest.spyOn(fs, 'writeFileSync')]
  for (const s of spies) s.mockImplementation(enospc)
  try {
    return await fn()
  } finally {
    for (const s of spies) s.mockRestore()
  }
}
const errorOf = (r: { status: number; headers: Record<string, unknown>; body: Buffer }) => ({
  status: r.status,
  code: r.headers['x-holdfast-error'],
  body: JSON.parse(r.body.toString()) as unknown,
})

describe('the lifecycle of a step', () => {
  it('runs identify, then route (shown the resolved route), records before it sends, then onResponse with the step', async () => {
    const r = await postAnthropic(p.url, '/w/life/a/main/v1/messages', body('agent:moved'), {
      'x-test-move': 'moved',
      'x-test-model': 'claude-chosen',
    })
    expect(r.status).toBe(200)
    await p.settled()
    expect(events).toEqual([
      'identify life/main route=null',
      // route sees the agent identify chose, and where resolve would send it: asked once.
      'route life/moved anthropic/claude-fake-1',
      'upstream /v1/messages',
      'onResponse life/moved step=001 200 claude-chosen',
    ])
    // The send half was in the journal when the provider received the request.
    expect(journalAtSend).toEqual([{ agent: 'moved', steps: [1] }])
    expect(JSON.parse(fake.received[0]?.body.toString() ?? '{}').model).toBe('claude-chosen')
    expect(steps('life', 'moved')).toEqual(['001'])
    expect(steps('life', 'main')).toEqual([])
  })

  it('numbers concurrent steps of one agent 001… without a gap, each record holding its own request', async () => {
    const sent = ['a', 'b', 'c', 'd'].map((x) => body(`concurrent ${x}`))
    const rs = await Promise.all(sent.map((b) => postAnthropic(p.url, '/w/life/a/many/v1/messages', b)))
    expect(rs.map((r) => r.status)).toEqual([200, 200, 200, 200])
    await p.settled()
    expect(steps('life', 'many')).toEqual(['001', '002', '003', '004'])
    const recorded = ['001', '002', '003', '004'].map((n) =>
      git(p.repo('life'), 'show', `agents/many:steps/many/${n}/request.json`),
    )
    expect([...recorded].sort()).toEqual([...sent].sort())
  })
})

describe('what each stage refuses with', () => {
  it('accept: a body that is not JSON is a 400 in the envelope; no plugin is asked, nothing is sent or written, no number is used', async () => {
    const r = await postAnthropic(p.url, '/w/refused/a/main/v1/messages', '{"model": ')
    expect(errorOf(r)).toEqual({
      status: 400,
      code: 'BAD_JSON',
      body: {
        type: 'error',
        error: { type: 'invalid_request_error', message: expect.stringMatching(/not valid JSON/) },
      },
    })
    const field = await postAnthropic(p.url, '/w/refused/a/main/v1/messages', '{"model":7,"messages":[]}')
    expect([field.status, field.headers['x-holdfast-error']]).toEqual([400, 'BAD_FIELD'])
    await p.settled()
    expect([events, fake.received.length, fs.existsSync(wsDir('refused'))]).toEqual([[], 0, false])
    expect((await postAnthropic(p.url, '/w/refused/a/main/v1/messages', body('ok'))).status).toBe(200)
    await p.settled()
    expect(steps('refused', 'main')).toEqual(['001'])
  })

  it('accept: a body over the limit is a 413 that closes the connection', async () => {
    const r = await postAnthropic(p.url, '/w/refused/a/big/v1/messages', body('x'.repeat(5000)))
    expect([r.status, r.headers['x-holdfast-error'], r.headers.connection]).toEqual([
      413,
      'BODY_TOO_LARGE',
      'close',
    ])
    expect(fake.received).toHaveLength(0)
  })

  it('resolve: an undeclared role is refused before any plugin route is asked; plugins hear it in onError', async () => {
    const r = await postAnthropic(p.url, '/w/roles/a/main/v1/messages', body('hi'), {
      'x-holdfast-role': 'ghost',
    })
    expect([r.status, r.headers['x-holdfast-error']]).toEqual([400, 'ROLE_NOT_DECLARED'])
    await p.settled()
    expect(events).toEqual(['identify roles/main route=null', 'onError roles/main ROLE_NOT_DECLARED'])
    expect([fake.received.length, fs.existsSync(wsDir('roles'))]).toEqual([0, false])
  })

  it('record: a send half that cannot be written is a 500 RECORD_WRITE_FAILED, and nothing is sent', async () => {
    expect((await postAnthropic(p.url, '/w/blocked/a/main/v1/messages', body('first'))).status).toBe(200)
    await p.settled()
    const sent = fake.received.length
    // The disk is full: the journal's write of the send half fails.
    const r = await withFullDisk(() => postAnthropic(p.url, '/w/blocked/a/main/v1/messages', body('hi')))
    expect(errorOf(r)).toEqual({
      status: 500,
      code: 'RECORD_WRITE_FAILED',
      body: {
        type: 'error',
        error: {
          type: 'api_error',
          message: 'the record of step 002 could not be written; nothing was sent',
        },
      },
    })
    await p.settled()
    expect(fake.received).toHaveLength(sent)
    expect(events.at(-1)).toBe('onError blocked/main RECORD_WRITE_FAILED')
    expect(steps('blocked', 'main')).toEqual(['001'])
    // Once the disk has room, the agent goes on with the number the refused step did not take.
    expect((await postAnthropic(p.url, '/w/blocked/a/main/v1/messages', body('again'))).status).toBe(200)
    await p.settled()
    expect(steps('blocked', 'main')).toEqual(['001', '002'])
  })

  it("record: a new workspace's first step on a full disk is a 500 RECORD_WRITE_FAILED, not INTERNAL, and the next one goes", async () => {
    const r = await withFullDisk(() => postAnthropic(p.url, '/w/fresh/a/main/v1/messages', body('hi')))
    expect([r.status, r.headers['x-holdfast-error']]).toEqual([500, 'RECORD_WRITE_FAILED'])
    expect(fake.received).toHaveLength(0)
    expect((await postAnthropic(p.url, '/w/fresh/a/main/v1/messages', body('hi'))).status).toBe(200)
    await p.settled()
    expect(steps('fresh', 'main')).toEqual(['001'])
  })

  it('a closing server answers 503 SHUTTING_DOWN before reading on, asking no plugin', async () => {
    p.server.ctx.closing = true
    try {
      const r = await postAnthropic(p.url, '/w/late/a/main/v1/messages', body('hi'))
      expect([r.status, r.headers['x-holdfast-error']]).toEqual([503, 'SHUTTING_DOWN'])
    } finally {
      p.server.ctx.closing = false
    }
    expect([events, fake.received.length, fs.existsSync(wsDir('late'))]).toEqual([[], 0, false])
  })
})

describe('what is not a step', () => {
  it('count_tokens runs identify and route and is forwarded, but numbers nothing', async () => {
    const r = await postAnthropic(p.url, '/w/count/a/main/v1/messages/count_tokens', body('count me'))
    expect(r.status).toBe(200)
    await p.settled()
    expect(events).toEqual([
      'identify count/main route=null',
      'route count/main anthropic/claude-fake-1',
      'upstream /v1/messages/count_tokens',
      'onResponse count/main step=null 200 claude-fake-1',
    ])
    expect((await postAnthropic(p.url, '/w/count/a/main/v1/messages', body('a step'))).status).toBe(200)
    await p.settled()
    expect(steps('count', 'main')).toEqual(['001'])
  })

  it('a pass-through request never enters the pipeline: no plugin is asked and nothing is written', async () => {
    const r = await rawRequest(p.url, {
      method: 'GET',
      path: '/w/pass/a/main/v1/models',
      headers: { 'anthropic-version': '2023-06-01', 'x-api-key': 'sk-test' },
    })
    expect(r.status).toBe(200)
    await p.settled()
    expect(events).toEqual(['upstream /v1/models'])
    expect(fs.existsSync(wsDir('pass'))).toBe(false)
  })
})
