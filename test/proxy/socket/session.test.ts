/**
 * The Responses WebSocket through holdfast, against the fake socket provider (per-socket state as
 * the real one keeps it): frames of one client socket over one provider socket with the client's
 * bytes, events back byte-equal, each frame a step whose record reads as the whole conversation,
 * the hold on frames, in-band answers for what the socket cannot carry, the pair closed together,
 * and frames that are no request passed as they came.
 */
import { type FakeResponsesWs, startFakeResponsesWs } from '../../support/fake-responses-ws'
import { eventually, gitBytes, startProxy, type Proxy } from '../../support/harness'
import { cliAsync } from '../../support/repo-checks'
import {
  answer,
  message,
  openSocket,
  responseId,
  tool,
  turn,
  typeOf,
  wsUrl,
  type Opened,
} from '../../support/socket-client'

let fake: FakeResponsesWs
let p: Proxy
const WS = 'sock'

beforeAll(async () => {
  fake = await startFakeResponsesWs()
  p = await startProxy({
    config: { providers: { openai: { dialect: 'openai', base_url: fake.openaiBaseUrl } } },
  })
})
afterAll(async () => {
  await p.close()
  await fake.close()
})
beforeEach(() => fake.reset())

const open = (agent: string, headers: Record<string, string> = {}): Promise<Opened> =>
  openSocket(wsUrl(p.url, `/w/${WS}/a/${agent}/v1/responses`), {
    authorization: 'Bearer sk-test',
    ...headers,
  })
const show = (agent: string, n: string, file: string): Buffer =>
  gitBytes(p.repo(WS), 'show', `agents/${agent}:steps/${agent}/${n}/${file}`)
const json = <T = Record<string, unknown>>(agent: string, n: string, file: string): T =>
  JSON.parse(show(agent, n, file).toString()) as T
const TOOLS = [tool('exec_command'), tool('view_image'), tool('apply_patch')]
const BASE = message('developer', `You are a coding agent. ${'Be careful. '.repeat(40)}`)
const create = (extra: object): object => ({
  type: 'response.create',
  model: 'gpt-fake-1',
  tools: TOOLS,
  stream: true,
  ...extra,
})

/** Three turns of one conversation on one socket; the frames as sent and the answers' events. */
async function threeTurns(s: Opened): Promise<{ frames: Buffer[]; answers: Buffer[][] }> {
  const frames = [
    create({ input: [BASE, message('user', 'first')] }),
    create({ input: [message('user', 'second')] }),
    create({ input: [message('user', 'third')] }),
  ]
  const answers: Buffer[][] = []
  const sent: Buffer[] = []
  for (const [i, f] of frames.entries()) {
    const chained = i === 0 ? f : { ...f, previous_response_id: responseId(answers[i - 1] as Buffer[]) }
    const bytes = Buffer.from(JSON.stringify(chained))
    sent.push(bytes)
    answers.push(await turn(s, bytes))
  }
  return { frames: sent, answers }
}

describe('a Responses WebSocket through holdfast', () => {
  it('carries three frames of one client socket over one provider socket with the client’s bytes, and the events back byte-equal', async () => {
    const s = await open('three')
    const { frames, answers } = await threeTurns(s)
    s.ws.close(1000, 'done')
    await s.closed
    expect(fake.upgrades).toHaveLength(1)
    expect(fake.frames.map((f) => f.data)).toEqual(frames)
    expect(new Set(fake.frames.map((f) => f.socket)).size).toBe(1)
    expect(answers.flat()).toEqual(fake.sent.map((m) => m.data))
    await eventually(() => fake.closes.has(fake.upgrades[0]!.socket), 5000, 'the provider socket closed')
    expect(fake.closes.get(fake.upgrades[0]!.socket)).toEqual({ code: 1000, reason: 'done' })
  })

  it('records each frame as a step whose request.json reads as the whole conversation and frame.json as the frame sent', async () => {
    const s = await open('whole')
    const { frames, answers } = await threeTurns(s)
    s.ws.close()
    await p.settled()
    for (const [i, n] of ['001', '002', '003'].entries()) {
      expect(show('whole', n, 'frame.json').equals(frames[i] as Buffer)).toBe(true)
      expect(show('whole', n, 'response.sse').toString()).toContain('event: response.completed')
    }
    const third = json<{
      input: { role?: string; type?: string; content: { text: string }[] }[]
      type?: string
    }>('whole', '003', 'request.json')
    expect(third.type).toBeUndefined()
    expect(third).not.toHaveProperty('previous_response_id')
    // The base prompt, then each user turn and each answer in order: the conversation as HTTP would carry it.
    expect(third.input.map((i) => `${i.role}:${i.content[0]?.text.slice(0, 6)}`)).toEqual([
      'developer:You ar',
      'user:first',
      'assistant:Hello ',
      'user:second',
      'assistant:Hello ',
      'user:third',
    ])
    const m3 = json<{
      websocket: Record<string, unknown>
      hold: { reason: string }
      usage: { cache_read_tokens: number }
    }>('whole', '003', 'meta.json')
    expect(m3.websocket).toMatchObject({
      kind: 'create',
      frame_file: 'frame.json',
      frame_bytes: (frames[2] as Buffer).length,
      previous_response_id: responseId(answers[1] as Buffer[]),
      frame_items: 1,
    })
    expect(m3.hold.reason).toBe('no-subtraction')
    // The socket is warm: the fake reads the prefix its earlier answers cached.
    expect(m3.usage.cache_read_tokens).toBeGreaterThan(0)
    const steps = await cliAsync(['steps', WS, 'whole', '--json', '--home', p.home], { HOLDFAST_TOKEN: '' })
    const rows = JSON.parse(steps.stdout) as {
      step: string
      status: number
      outcome: string
      cache_read: number
    }[]
    expect(rows.map((r) => [r.step, r.status, r.outcome])).toEqual([
      ['001', 200, 'ok'],
      ['002', 200, 'ok'],
      ['003', 200, 'ok'],
    ])
    const why = await cliAsync(['why', WS, 'whole', '003', '--home', p.home], { HOLDFAST_TOKEN: '' })
    expect(why.stdout).toMatch(/provider cache: read [1-9]/)
  })

  it('holds a frame that drops a tool: the frame sent carries the previous step’s tools, the rest its own bytes', async () => {
    const s = await open('held')
    const first = await turn(s, create({ input: [BASE, message('user', 'go')] }))
    const dropped = create({
      previous_response_id: responseId(first),
      input: [message('user', 'next')],
      tools: TOOLS.filter((t) => (t as { name: string }).name !== 'view_image'),
    })
    await turn(s, dropped)
    s.ws.close()
    await p.settled()
    const sent = JSON.parse(fake.frames[1]!.data.toString()) as { tools: unknown[]; input: unknown[] }
    expect(sent.tools).toEqual(TOOLS)
    expect(sent.input).toEqual([message('user', 'next')])
    expect(json('held', '002', 'meta.json')).toMatchObject({ hold: { applied: true, held: ['view_image'] } })
    expect(show('held', '002', 'frame.json').equals(fake.frames[1]!.data)).toBe(true)
  })

  it('leaves a frame without tools alone: sent as it came, its record carrying the tools the socket last declared', async () => {
    const s = await open('toolless')
    const first = await turn(s, create({ input: [BASE, message('user', 'go')] }))
    const { tools: _t, ...bare } = create({
      previous_response_id: responseId(first),
      input: [message('user', 'more')],
    }) as { tools: unknown }
    const bytes = Buffer.from(JSON.stringify(bare))
    await turn(s, bytes)
    s.ws.close()
    await p.settled()
    expect(fake.frames[1]!.data.equals(bytes)).toBe(true)
    expect(json('toolless', '002', 'meta.json')).toMatchObject({
      hold: { applied: false, reason: 'tools-inherited' },
    })
    expect(json<{ tools: unknown[] }>('toolless', '002', 'request.json').tools).toEqual(TOOLS)
  })

  it('answers a continuation on a new socket, once the provider closed the old one, in band with previous_response_not_found and sends nothing', async () => {
    const s = await open('gone')
    const first = await turn(s, create({ input: [BASE, message('user', 'go')] }))
    fake.closeSockets(1001, 'provider restarting')
    expect(await s.closed).toEqual({ code: 1001, reason: 'provider restarting' })
    const again = await open('gone')
    const framesBefore = fake.frames.length
    const [err] = await turn(
      again,
      create({ previous_response_id: responseId(first), input: [message('user', 'next')] }),
    )
    expect(JSON.parse(err!.toString())).toEqual({
      type: 'error',
      status: 400,
      error: {
        type: 'invalid_request_error',
        code: 'previous_response_not_found',
        message: `Previous response with id '${responseId(first)}' not found.`,
        param: 'previous_response_id',
      },
    })
    expect(fake.frames.length).toBe(framesBefore)
    // The full context on the same socket then goes.
    await turn(again, create({ input: [BASE, message('user', 'go'), message('user', 'next')] }))
    again.ws.close()
    await p.settled()
    const steps = await cliAsync(['steps', WS, 'gone', '--json', '--home', p.home], { HOLDFAST_TOKEN: '' })
    expect((JSON.parse(steps.stdout) as unknown[]).length).toBe(2)
  })

  it('closes the client with the provider’s code and reason when the provider goes away mid-answer, and records UPSTREAM_FAILED', async () => {
    const s = await open('cut')
    fake.enqueue({ closeAfter: { events: 3, code: 1011, reason: 'overloaded' } })
    s.ws.send(JSON.stringify(create({ input: [BASE, message('user', 'go')] })))
    expect(await s.closed).toEqual({ code: 1011, reason: 'overloaded' })
    await p.settled()
    const m = json<{ outcome: string; error: { code: string; message: string } }>('cut', '001', 'meta.json')
    expect(m.outcome).toBe('upstream_error')
    expect(m.error.code).toBe('UPSTREAM_FAILED')
    expect(m.error.message).toContain('1011 overloaded')
    // Every event the client got is in the record.
    const kept = show('cut', '001', 'response.sse').toString()
    for (const r of s.received) expect(kept).toContain(r.data.toString())
  })

  it('closes the provider socket when the client goes away mid-answer and records the step as CLIENT_GONE', async () => {
    const s = await open('left')
    fake.enqueue({ eventDelayMs: 30 })
    s.ws.send(JSON.stringify(create({ input: [BASE, message('user', 'go')] })))
    await new Promise<void>((r) => {
      const t = setInterval(() => s.received.length >= 2 && (clearInterval(t), r()), 5)
    })
    s.ws.terminate()
    await p.settled()
    const m = json<{ outcome: string; error: { code: string } }>('left', '001', 'meta.json')
    expect([m.outcome, m.error.code]).toEqual(['aborted', 'CLIENT_GONE'])
    await eventually(() => fake.closes.has(fake.upgrades[0]!.socket), 5000, 'the provider socket closed')
  })

  it('passes binary, non-JSON and unknown-type frames as they came, recorded on .aux, and response.processed unrecorded', async () => {
    const s = await open('odd')
    const binary = Buffer.from([0xff, 0, 1, 2])
    const text = Buffer.from('not json {')
    const unknown = Buffer.from(JSON.stringify({ type: 'response.interrupt', discard_partial_items: true }))
    const processed = Buffer.from(JSON.stringify({ type: 'response.processed', response_id: 'resp_x' }))
    s.ws.send(binary, { binary: true })
    s.ws.send(text, { binary: false })
    s.ws.send(unknown, { binary: false })
    s.ws.send(processed, { binary: false })
    const events = await turn(s, create({ input: [BASE, message('user', 'still here')] }))
    expect(typeOf(events[events.length - 1]!)).toBe('response.completed')
    s.ws.close()
    await p.settled()
    expect(fake.frames.slice(0, 4).map((f) => [f.binary, f.data])).toEqual([
      [true, binary],
      [false, text],
      [false, unknown],
      [false, processed],
    ])
    expect(show('odd.aux', '001', 'request.json').equals(binary)).toBe(true)
    expect(json('odd.aux', '001', 'meta.json')).toMatchObject({
      websocket: { kind: 'other', binary: true, frame_file: 'request.json' },
    })
    expect(show('odd.aux', '002', 'request.json').equals(text)).toBe(true)
    expect(json('odd.aux', '003', 'meta.json')).toMatchObject({
      websocket: { kind: 'other', type: 'response.interrupt' },
      hold: { reason: 'not-a-request' },
    })
    expect(() => show('odd.aux', '004', 'meta.json')).toThrow()
    expect(json('odd', '001', 'meta.json')).toMatchObject({ status: 200, outcome: 'ok' })
  })

  it('records a generate:false pre-warm on the .aux sibling, and the next frame continues it on the main agent', async () => {
    const s = await open('warm')
    const warm = await turn(s, create({ generate: false, input: [BASE] }))
    await turn(s, create({ previous_response_id: responseId(warm), input: [message('user', 'go')] }))
    s.ws.close()
    await p.settled()
    expect(json('warm.aux', '001', 'meta.json')).toMatchObject({
      websocket: { kind: 'prewarm' },
      status: 200,
    })
    const main = json<{ input: unknown[] }>('warm', '001', 'request.json')
    expect(main.input).toEqual([BASE, message('user', 'go')])
    expect(json('warm', '001', 'meta.json')).toMatchObject({
      websocket: { kind: 'create', previous_response_id: responseId(warm) },
    })
  })

  it('keeps transport events in the answer without counting them as output', async () => {
    const s = await open('transport')
    fake.enqueue({ transport: true, text: 'only this' })
    const events = await turn(s, create({ input: [BASE, message('user', 'go')] }))
    s.ws.close()
    await p.settled()
    expect(events.map((e) => typeOf(e))).toEqual(
      expect.arrayContaining([
        'codex.rate_limits',
        'codex.response.metadata',
        'response.metadata',
        'responsesapi.websocket_timing',
      ]),
    )
    const sse = show('transport', '001', 'response.sse').toString()
    for (const type of [
      'codex.rate_limits',
      'codex.response.metadata',
      'response.metadata',
      'responsesapi.websocket_timing',
    ])
      expect(sse).toContain(`event: ${type}\n`)
    const m = json<{ usage: { output_tokens: number }; stop_reason: string }>('transport', '001', 'meta.json')
    expect(m.stop_reason).toBe('completed')
    expect(m.usage.output_tokens).toBe(Math.ceil('only this'.length / 4))
  })

  it('keeps Codex’s session headers in meta.json, without the repository URLs of its turn metadata', async () => {
    const turnMeta = JSON.stringify({
      session_id: 'sess-1',
      workspaces: { repo: { associated_remote_urls: { origin: 'https://github.com/acme/widgets.git' } } },
    })
    const s = await open('headers', {
      'session-id': 'sess-1',
      'x-codex-turn-metadata': turnMeta,
      originator: 'codex_exec',
      'x-holdfast-note': 'mine',
    })
    await turn(s, create({ input: [BASE, message('user', 'go')] }))
    s.ws.close()
    await p.settled()
    const h = json<{ request_headers: Record<string, string> }>('headers', '001', 'meta.json').request_headers
    expect(h).toMatchObject({ 'session-id': 'sess-1', originator: 'codex_exec' })
    expect(h.authorization).toBeUndefined()
    expect(Object.keys(h).some((k) => k.startsWith('sec-websocket'))).toBe(false)
    expect(JSON.stringify(h)).not.toContain('acme/widgets')
    expect(String(fake.upgrades[0]!.headers['x-codex-turn-metadata'])).toContain('acme/widgets')
    expect(fake.upgrades[0]!.headers['x-holdfast-note']).toBeUndefined()
  })

  it('answers the in-band error the provider sent as the step’s answer, recorded as an upstream error', async () => {
    const s = await open('refused')
    fake.enqueue({ error: { status: 429, code: 'rate_limit_exceeded', message: 'slow down' } })
    const events = await turn(s, create({ input: [BASE, message('user', 'go')] }))
    expect(JSON.parse(events[0]!.toString())).toMatchObject({ type: 'error', status: 429 })
    s.ws.close()
    await p.settled()
    expect(json('refused', '001', 'meta.json')).toMatchObject({
      status: 429,
      outcome: 'upstream_error',
      error: { code: 'UPSTREAM_STREAM_ERROR' },
    })
  })

  it('refuses a frame whose field has the wrong type in band, and sends nothing', async () => {
    const s = await open('badfield')
    const [err] = await turn(s, create({ input: 'x', tools: 'not an array' }))
    expect(JSON.parse(err!.toString())).toMatchObject({
      type: 'error',
      status: 400,
      error: { code: 'BAD_FIELD' },
    })
    expect(fake.frames).toHaveLength(0)
    const from = s.received.length
    s.ws.send(JSON.stringify(create({ input: [BASE] })))
    await answer(s, from)
    s.ws.close()
  })
})
