/**
 * The responses dialect end to end against the fake upstream: POST /v1/responses (addressed or
 * not) is a recorded step whose request.json is the bytes the provider got and whose stream is
 * forwarded and recorded byte for byte; meta.json has the Responses usage, cache reads and cost;
 * a tool drop is held; loaded tools are injected as flat function tools and their unload held; a
 * role whose row speaks openai routes it; malformed fields and stream errors are answered and
 * recorded as for any dialect; input_tokens gets compose and the hold, unrecorded; other
 * /v1/responses paths pass through unrecorded.
 */
import { setRole } from '../../../proxy/store/config/edit'
import { openRepo } from '../../../proxy/store/git'
import { writeLoadedSet } from '../../../proxy/store/loaded-sets'
import { git, gitBytes, startProxy, type Proxy } from '../../support/harness'
import {
  callOutputs,
  codexLike,
  developer,
  fn,
  type Item,
  outputOf,
  postResponses,
  user,
} from '../../support/responses'

let p: Proxy
const WS = 'resp'

beforeAll(async () => {
  p = await startProxy()
})
afterAll(async () => {
  await p.close()
})
beforeEach(() => p.fake.reset())

const show = (agent: string, n: string, file: string): Buffer =>
  gitBytes(p.repo(WS), 'show', `agents/${agent}:steps/${agent}/${n}/${file}`)
const metaOf = (agent: string, n: string, ws = WS) =>
  JSON.parse(
    gitBytes(p.repo(ws), 'show', `agents/${agent}:steps/${agent}/${n}/meta.json`).toString(),
  ) as Record<string, unknown> & {
    hold: { applied: boolean; reason: string; held: string[]; detail?: string }
    usage: { input_tokens: number; cache_read_tokens: number; output_tokens: number } | null
    cost: { usd: number; priced_as: string } | null
    changes: { field: string; why: string }[]
  }
const sentBody = (i: number): Item => JSON.parse(p.fake.received[i]?.body.toString() ?? '{}') as Item
const toolNames = (body: Item): unknown[] => (body.tools as Item[]).map((t) => t.name ?? t.type)

describe('a responses step', () => {
  it('is recorded with the exact bytes sent, its stream forwarded and recorded byte for byte, usage and cost', async () => {
    const base = `${p.url}/w/${WS}/a/codex`
    const first = [developer('You are a coding agent.'), user('<environment_context/>'), user('Run ls.')]
    const tools = [fn('exec_command'), fn('fs_grep'), { type: 'web_search', external_web_access: false }]
    p.fake.enqueue({ toolCalls: [{ name: 'exec_command', arguments: { cmd: 'ls' } }] })
    const one = await postResponses(base, codexLike(first, tools))
    expect(one.status).toBe(200)
    expect(one.headers.get('content-type')).toMatch(/^text\/event-stream/)
    const output = outputOf(one.bytes)
    const input = [...first, ...output, ...callOutputs(output, 'a.txt')]
    p.fake.enqueue({ text: 'There is a.txt.' })
    const two = await postResponses(base, codexLike(input, [tools[0]!, tools[2]!]))
    expect(two.status).toBe(200)
    await p.settled()

    expect(p.fake.received.map((r) => `${r.method} ${r.url}`)).toEqual([
      'POST /v1/responses',
      'POST /v1/responses',
    ])
    expect(git(p.repo(WS), 'log', '--format=%s', 'agents/codex').trim().split('\n')).toEqual([
      'step 002: gpt-5 [codex]',
      'step 001: gpt-5 [codex]',
      'config: starter providers.yaml',
    ])
    for (const [i, n, answer] of [
      [0, '001', one],
      [1, '002', two],
    ] as const) {
      expect(show('codex', n, 'request.json').equals(p.fake.received[i]!.body)).toBe(true)
      expect(show('codex', n, 'response.sse').equals(answer.bytes)).toBe(true)
    }
    expect(two.bytes.toString()).toContain('event: response.output_text.delta')

    const m1 = metaOf('codex', '001')
    const m2 = metaOf('codex', '002')
    expect(m1).toMatchObject({
      dialect: 'responses',
      status: 200,
      outcome: 'ok',
      response_file: 'response.sse',
      stop_reason: 'completed',
      route: { provider: 'openai', model: 'gpt-5' },
      hold: { reason: 'first-step' },
    })
    expect(m1.usage?.cache_read_tokens).toBe(0)
    // The fake's cache model: step 2 shares step 1's rendering as its prefix (tools held).
    expect(m2.usage?.cache_read_tokens).toBeGreaterThan(0)
    expect(m2.usage?.output_tokens).toBeGreaterThan(0)
    expect(m2.cost?.usd).toBeGreaterThan(0)
    expect(m2.cost?.priced_as).toMatch(/gpt-5/)
    // The drop of fs_grep was held: the provider got step 1's tools array again.
    expect(m2.hold).toMatchObject({ applied: true, reason: 'applied', held: ['fs_grep'] })
    expect(toolNames(sentBody(1))).toEqual(['exec_command', 'fs_grep', 'web_search'])
  })

  it('counts input tokens at /v1/responses/input_tokens with compose and the hold applied, unrecorded', async () => {
    // After the first test: agent codex's last record re-sent [exec_command, fs_grep, web_search].
    const answer = '{"object":"response.input_tokens","input_tokens":42}'
    p.fake.enqueue({ path: '/v1/responses/input_tokens', body: answer })
    const tools = [fn('exec_command'), { type: 'web_search', external_web_access: false }]
    const first = [developer('You are a coding agent.'), user('<environment_context/>'), user('Run ls.')]
    const { stream: _stream, store: _store, include: _include, ...count } = codexLike(first, tools)
    const res = await fetch(`${p.url}/w/${WS}/a/codex/v1/responses/input_tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(count),
    })
    expect([res.status, await res.text()]).toEqual([200, answer])
    expect(p.fake.received.map((r) => `${r.method} ${r.url}`)).toEqual(['POST /v1/responses/input_tokens'])
    expect(toolNames(sentBody(0))).toEqual(['exec_command', 'fs_grep', 'web_search'])
    await p.settled()
    expect(git(p.repo(WS), 'log', '--format=%s', '-1', 'agents/codex').trim()).toBe('step 002: gpt-5 [codex]')
  })

  it('is recorded for the default workspace and agent when unaddressed, a JSON answer as response.json', async () => {
    const res = await postResponses(p.url, { model: 'gpt-5', input: 'Say hi.', stream: false })
    expect(res.status).toBe(200)
    expect(JSON.parse(res.bytes.toString())).toMatchObject({ object: 'response', status: 'completed' })
    await p.settled()
    const meta = metaOf('main', '001', 'default')
    expect(meta).toMatchObject({
      dialect: 'responses',
      response_file: 'response.json',
      stop_reason: 'completed',
    })
    expect(meta.usage).toMatchObject({ output_tokens: expect.any(Number), cache_read_tokens: 0 })
    const recorded = gitBytes(p.repo('default'), 'show', 'agents/main:steps/main/001/response.json')
    expect(recorded.equals(res.bytes)).toBe(true)
  })

  it('passes GET /v1/responses/{id} and its other paths through unrecorded', async () => {
    p.fake.enqueue({ path: '/v1/responses/resp_1', body: '{"id":"resp_1","object":"response"}' })
    const res = await fetch(`${p.url}/w/${WS}/a/reader/v1/responses/resp_1`, {
      headers: { authorization: 'Bearer sk-client' },
    })
    expect([res.status, await res.text()]).toEqual([200, '{"id":"resp_1","object":"response"}'])
    expect(p.fake.received.map((r) => `${r.method} ${r.url}`)).toEqual(['GET /v1/responses/resp_1'])
    await p.settled()
    expect(git(p.repo(WS), 'branch', '--list', 'agents/reader')).toBe('')
  })

  it("refuses a field it cannot read with a 400 in openai's envelope, recording nothing", async () => {
    const res = await postResponses(`${p.url}/w/${WS}/a/bad`, {
      model: 'gpt-5',
      input: [{ role: 'user', content: 5 }],
    })
    expect(res.status).toBe(400)
    expect(JSON.parse(res.bytes.toString())).toEqual({
      error: {
        message: expect.stringContaining(
          'input[0].content must be a string or an array of content parts',
        ) as unknown,
        type: 'invalid_request_error',
        param: null,
        code: null,
      },
    })
    expect(p.fake.received).toHaveLength(0)
    expect(git(p.repo(WS), 'branch', '--list', 'agents/bad')).toBe('')
  })

  it('records a 200 stream that carried an error event as an upstream error', async () => {
    const events = [
      {
        type: 'response.created',
        sequence_number: 0,
        response: { id: 'resp_x', status: 'in_progress', output: [] },
      },
      { type: 'error', sequence_number: 1, code: 'server_error', message: 'The model failed.', param: null },
    ]
    const body = events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join('')
    p.fake.enqueue({ body, headers: { 'content-type': 'text/event-stream' } })
    const res = await postResponses(`${p.url}/w/${WS}/a/failing`, {
      model: 'gpt-5',
      input: 'hi',
      stream: true,
    })
    expect(res.status).toBe(200)
    expect(res.bytes.toString()).toBe(body)
    await p.settled()
    expect(metaOf('failing', '001')).toMatchObject({
      status: 200,
      outcome: 'upstream_error',
      error: {
        code: 'UPSTREAM_STREAM_ERROR',
        message: expect.stringContaining('The model failed.') as unknown,
      },
    })
  })
})

describe('loaded tools and roles on a responses step', () => {
  it('injects loaded tools as flat function tools, and holds their unload', async () => {
    const entry = {
      client: 'fs',
      tool: { name: 'read', description: 'Reads a file.', input_schema: { type: 'object' } },
    }
    await writeLoadedSet(p.home, WS, 'loader', [entry])
    const base = `${p.url}/w/${WS}/a/loader`
    const first = [user('Read a.txt.')]
    expect((await postResponses(base, codexLike(first, [fn('exec_command')]))).status).toBe(200)
    await writeLoadedSet(p.home, WS, 'loader', [])
    const input = [...first, { type: 'message', role: 'assistant', content: 'ok' }, user('Thanks.')]
    expect((await postResponses(base, codexLike(input, [fn('exec_command')]))).status).toBe(200)
    await p.settled()
    expect(sentBody(0).tools).toEqual([
      fn('exec_command'),
      { type: 'function', name: 'fs_read', description: 'Reads a file.', parameters: { type: 'object' } },
    ])
    expect(metaOf('loader', '001').changes).toEqual([
      { field: 'tools', why: 'appended loaded tools: fs_read' },
    ])
    expect(toolNames(sentBody(1))).toEqual(['exec_command', 'fs_read'])
    expect(metaOf('loader', '002').hold).toMatchObject({ applied: true, held: ['fs_read'] })
  })

  it('routes by a role whose provider row speaks openai: model replaced, max_output_tokens filled', async () => {
    const rows = p.server.ctx.config.providers
    await setRole(
      openRepo(p.repo(WS)),
      'default',
      'coder',
      { provider: 'openai', model: 'gpt-5-mini', max_output_tokens: 321 },
      rows,
    )
    const res = await postResponses(`${p.url}/w/${WS}/a/roled`, { model: 'coder', input: 'hi', stream: true })
    expect(res.status).toBe(200)
    await p.settled()
    expect(sentBody(0)).toMatchObject({ model: 'gpt-5-mini', max_output_tokens: 321, input: 'hi' })
    expect(metaOf('roled', '001')).toMatchObject({
      route: { provider: 'openai', model: 'gpt-5-mini', role: 'coder' },
      changes: [
        { field: 'model', why: expect.stringContaining('role "coder"') as unknown },
        { field: 'max_output_tokens', why: 'role "coder" sets max_output_tokens 321' },
      ],
    })
  })
})
