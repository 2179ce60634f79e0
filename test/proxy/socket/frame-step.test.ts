/**
 * One frame through the stages to its record (or its refusal in band), against a running
 * server's context: a create frame's record holds the whole conversation and, beside it in the
 * journal, the frame as it will be sent (the client's own buffer when nothing changed); a
 * pre-warm goes to the `.aux` sibling; an unknown continuation, a bad field and a frame routed to
 * another row are refused in band with nothing written; a frame that is no request is recorded
 * as it came.
 */
import path from 'node:path'
import type { AnyPlugin } from '../../../plugins/instance'
import { checkName, MAX_NAME_BYTES } from '../../../proxy/core/naming'
import { responses } from '../../../proxy/dialects/responses'
import { readJournal } from '../../../proxy/record/journal/reader'
import {
  auxAgent,
  prepareCreate,
  prepareOther,
  type Prepared,
  type Refused,
} from '../../../proxy/socket/frame-step'
import type { SocketSite } from '../../../proxy/socket/site'
import { type FakeResponsesWs, startFakeResponsesWs } from '../../support/fake-responses-ws'
import { startProxy, type Proxy } from '../../support/harness'

const rerouter: AnyPlugin = {
  name: 'rerouter',
  apiVersion: 1,
  setup: () => ({
    route: (ex) => (ex.headers['x-test-row'] ? { provider: ex.headers['x-test-row'] } : undefined),
  }),
}

let fake: FakeResponsesWs
let p: Proxy
beforeAll(async () => {
  fake = await startFakeResponsesWs()
  p = await startProxy({
    config: {
      plugins: ['rerouter'],
      providers: {
        openai: { dialect: 'openai', base_url: fake.openaiBaseUrl },
        other: { dialect: 'openai', base_url: fake.openaiBaseUrl },
      },
    } as never,
    plugins: { rerouter },
  })
})
afterAll(async () => {
  await p.close()
  await fake.close()
})

const site = (agent: string, headers: Record<string, string> = {}): SocketSite => ({
  n: 1,
  dialect: responses,
  frames: responses.socket!,
  path: '/v1/responses',
  workspace: 'frames',
  agent,
  headers,
  tokenCarried: false,
  provider: 'openai',
  row: { dialect: 'openai', base_url: fake.openaiBaseUrl },
  key: undefined,
  url: new URL(`${fake.openaiBaseUrl}/responses`),
  upgrade: {},
})
const journal = (agent: string) =>
  readJournal(path.join(p.home, 'workspaces', 'frames', 'journal', agent)).steps
const frameOf = (v: object): Buffer =>
  Buffer.from(JSON.stringify({ type: 'response.create', model: 'gpt-fake-1', ...v }))
const parsed = (b: Buffer) => JSON.parse(b.toString()) as Record<string, never>
const none = () => undefined

/** The prepared step (the test then lets its commit go with `step.settle`). */
function taken(r: Prepared | Refused): Prepared {
  if ('refused' in r) throw new Error(`refused: ${r.refused.toString()}`)
  return r
}

describe('a frame through the stages', () => {
  it('refuses a continuation of a response the socket does not hold in band, writing nothing', async () => {
    const f = frameOf({ previous_response_id: 'resp_gone', input: [] })
    const r = await prepareCreate(p.server.ctx, site('unknown'), none, f, parsed(f), 'create')
    expect('refused' in r && JSON.parse(r.refused.toString()).error.code).toBe('previous_response_not_found')
    expect(journal('unknown').size).toBe(0)
  })

  it('refuses a field of the wrong type in band', async () => {
    const f = frameOf({ input: 7 })
    const r = await prepareCreate(p.server.ctx, site('badfield'), none, f, parsed(f), 'create')
    expect('refused' in r && JSON.parse(r.refused.toString())).toMatchObject({
      status: 400,
      error: { code: 'BAD_FIELD' },
    })
  })

  it('refuses a frame a plugin routes to another row than its socket’s, writing nothing', async () => {
    const f = frameOf({ input: [] })
    const r = await prepareCreate(
      p.server.ctx,
      site('rerouted', { 'x-test-row': 'other' }),
      none,
      f,
      parsed(f),
      'create',
    )
    expect('refused' in r && JSON.parse(r.refused.toString()).error).toMatchObject({
      code: 'SOCKET_ROW_CHANGED',
    })
    expect(journal('rerouted').size).toBe(0)
  })

  it('records a create frame with its whole conversation, the frame to send in the journal beside it', async () => {
    const base = {
      items: [{ role: 'user', content: 'before' }],
      itemBytes: [Buffer.from('{"role":"user","content":"before"}')],
      tools: undefined,
    }
    const f = frameOf({ previous_response_id: 'resp_1', input: [{ role: 'user', content: 'now' }] })
    const r = taken(
      await prepareCreate(
        p.server.ctx,
        site('rec'),
        (id) => (id === 'resp_1' ? base : undefined),
        f,
        parsed(f),
        'create',
      ),
    )
    expect(r.wire).toBe(f)
    const [step] = [...journal('rec').values()]
    expect(step!.wire!.equals(f)).toBe(true)
    expect(JSON.parse(step!.request.toString())).toEqual({
      model: 'gpt-fake-1',
      input: [
        { role: 'user', content: 'before' },
        { role: 'user', content: 'now' },
      ],
    })
    expect(step!.meta.websocket).toEqual({
      kind: 'create',
      type: 'response.create',
      frame_file: 'frame.json',
      frame_bytes: f.length,
      previous_response_id: 'resp_1',
      frame_items: 1,
      socket: 1,
    })
    r.step.settle({
      agent: 'rec',
      n: r.step.n,
      model: null,
      request: r.step.entry.place,
      finished: { meta: { ...r.step.meta, outcome: 'not_sent' }, response: null },
    })
  })

  it('records a pre-warm on the .aux sibling, and a frame that is no request there as it came', async () => {
    const f = frameOf({ generate: false, input: [] })
    const r = taken(await prepareCreate(p.server.ctx, site('pw'), none, f, parsed(f), 'prewarm'))
    expect(r.step.agent.name).toBe('pw.aux')
    r.step.settle({
      agent: 'pw.aux',
      n: r.step.n,
      model: null,
      request: r.step.entry.place,
      finished: { meta: r.step.meta, response: null },
    })
    const bin = Buffer.from([1, 2, 3])
    const o = taken(await prepareOther(p.server.ctx, site('pw'), bin, true, undefined))
    expect([o.step.agent.name, o.step.n]).toEqual(['pw.aux', 2])
    const kept = journal('pw.aux').get(2)!
    expect(kept.request.equals(bin)).toBe(true)
    expect(kept.wire).toBeUndefined()
    o.step.settle({
      agent: 'pw.aux',
      n: o.step.n,
      model: null,
      request: o.step.entry.place,
      finished: { meta: o.step.meta, response: null },
    })
    await p.settled()
  })

  it('names the .aux sibling within the name limit', () => {
    expect(auxAgent('main')).toBe('main.aux')
    const long = auxAgent('a'.repeat(MAX_NAME_BYTES))
    expect(checkName('agent', long)).toBeUndefined()
    expect(long).not.toBe(auxAgent('a'.repeat(MAX_NAME_BYTES - 1)))
  })
})
