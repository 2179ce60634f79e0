/**
 * What the request path reads is checked before anything is written: a field of the wrong type
 * is a 400 in the dialect's envelope naming it, JSON nested deeper than 512 levels is a 400, and
 * nothing reaches the disk or the provider. A previous record that cannot be read back never
 * blocks the agent: the step goes as composed with the hold verdict `record-fault`, which `why`
 * shows, and the faulty record stays as it is. count_tokens writes nothing.
 */
import fs from 'node:fs'
import path from 'node:path'
import { why } from '../../../cli/why'
import { anthropic, openai } from '../../../proxy/dialects'
import { git, startProxy, type Proxy } from '../../support/harness'
import { damageRecord } from '../../support/repo-checks'

let p: Proxy
beforeAll(async () => {
  p = await startProxy()
})
afterAll(() => p.close())

const MODEL = 'claude-sonnet-4-5'
const ANTHROPIC = { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' }

async function post(
  route: string,
  body: string | object,
  headers: Record<string, string> = ANTHROPIC,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${p.url}${route}`, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
  return { status: res.status, json: (await res.json()) as Record<string, unknown> }
}

const message = (r: { json: Record<string, unknown> }): string =>
  (r.json.error as { message: string }).message

const msgs = (text: string) => [{ role: 'user', content: text }]

describe('shape checks', () => {
  it.each([
    [{ tools: 'x' }, 'tools must be an array of tool objects with a name'],
    [{ tools: {} }, 'tools must be an array of tool objects with a name'],
    [{ tools: [{ description: 'no name' }] }, 'tools[0].name is required'],
    [{ tools: [{ name: 7 }] }, 'tools[0].name must be a string'],
    [{ messages: [1] }, 'messages[0] must be an object'],
    [
      { messages: [{ role: 'user', content: 5 }] },
      'messages[0].content must be a string or an array of content blocks',
    ],
    [
      { messages: [{ role: 'user', content: [{ type: 'text', text: 1 }] }] },
      'messages[0].content[0].text must be a string',
    ],
    [{ system: 3 }, 'system must be a string or an array of text blocks'],
    [{ model: ['x'] }, 'model must be a string'],
    [{ stream: 'yes' }, 'stream must be true or false'],
    [{ tool_choice: 'auto' }, 'tool_choice must be an object'],
  ])('refuses an anthropic body with %j, naming the field, and writes nothing', async (bad, said) => {
    const r = await post('/w/shapes/a/main/v1/messages', {
      model: MODEL,
      max_tokens: 8,
      messages: msgs('hi'),
      ...bad,
    })
    expect(r.status).toBe(400)
    expect(r.json).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } })
    expect(message(r)).toBe(`the request is refused: ${said}`)
    expect(fs.existsSync(path.join(p.home, 'workspaces', 'shapes'))).toBe(false)
  })

  it.each([
    [{ tools: [{ type: 'function' }] }, 'tools[0] must name its tool (function.name)'],
    [{ tools: [{ type: 'function', function: { name: 1 } }] }, 'tools[0].function.name must be a string'],
    [
      { messages: [{ role: 'assistant', tool_calls: [{ function: 'x' }] }] },
      'messages[0].tool_calls[0].function must be an object',
    ],
    [{ tool_choice: 3 }, 'tool_choice must be a string or an object'],
    [{ parallel_tool_calls: 'no' }, 'parallel_tool_calls must be true or false'],
  ])('refuses an openai body with %j, naming the field, and writes nothing', async (bad, said) => {
    const r = await post(
      '/w/shapes/a/main/v1/chat/completions',
      { model: 'gpt-5', messages: msgs('hi'), ...bad },
      { 'content-type': 'application/json' },
    )
    expect(r.status).toBe(400)
    expect(r.json).toMatchObject({ error: { type: 'invalid_request_error' } })
    expect(message(r)).toBe(`the request is refused: ${said}`)
    expect(fs.existsSync(path.join(p.home, 'workspaces', 'shapes'))).toBe(false)
  })

  it('leaves fields it does not read open, and null contents of openai messages alone', () => {
    expect(anthropic.checkShape({ model: MODEL, messages: [], anything: { deep: [1, 'x'] } })).toBeUndefined()
    expect(
      openai.checkShape({ model: 'gpt-5', messages: [{ role: 'assistant', content: null }] }),
    ).toBeUndefined()
  })

  it('refuses JSON nested deeper than 512 levels before parsing it, and the agent goes on', async () => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000)
    const body = `{"model":"${MODEL}","max_tokens":8,"messages":[{"role":"user","content":[{"type":"text","text":"x","extra":${deep}}]}]}`
    const r = await post('/w/shapes/a/deep/v1/messages', body)
    expect(r.status).toBe(400)
    expect(message(r)).toBe('the request body is nested deeper than 512 levels')
    expect(fs.existsSync(path.join(p.home, 'workspaces', 'shapes'))).toBe(false)
    const ok = await post('/w/shapes/a/deep/v1/messages', {
      model: MODEL,
      max_tokens: 8,
      messages: msgs('hi'),
    })
    expect(ok.status).toBe(200)
  })
})

describe('a previous record that cannot be read back', () => {
  const repo = () => path.join(p.home, 'workspaces', 'faults', 'repo.git')

  it.each([
    ['does not parse', 'not json at all', 'not JSON'],
    [
      'has tools that are not an array',
      JSON.stringify({ model: MODEL, tools: 'x', messages: msgs('a') }),
      'tools must be an array',
    ],
    [
      'is nested too deep',
      `{"model":"${MODEL}","messages":${'['.repeat(600)}${']'.repeat(600)}}`,
      'nested deeper than 512 levels',
    ],
  ])(
    'that %s: the next step is sent as composed with the verdict record-fault',
    async (_what, bytes, reason) => {
      const agent = `rf-${_what.replace(/\W+/g, '-')}`
      const route = `/w/faults/a/${agent}/v1/messages`
      const tools = [{ name: 'A', input_schema: { type: 'object' } }]
      expect((await post(route, { model: MODEL, max_tokens: 8, tools, messages: msgs('one') })).status).toBe(
        200,
      )
      await p.settled()
      damageRecord(repo(), agent, '001', bytes) // the faulty record, as a hand edit or an old version could leave it
      p.server.ctx.records.previousRecords.forget(`faults\0${agent}`) // as after a restart
      const sentBefore = p.fake.received.length
      const r = await post(route, { model: MODEL, max_tokens: 8, messages: msgs('two') })
      expect(r.status).toBe(200)
      expect(p.fake.received.length).toBe(sentBefore + 1)
      await p.settled()
      const report = await why(p.home, 'faults', agent, '002')
      expect(report.hold).toMatchObject({ applied: false, reason: 'record-fault' })
      expect(report.hold?.detail).toContain(reason)
      expect(report.summary.join('\n')).toMatch(
        /hold not applied: record-fault \(the previous step's request\.json cannot be read back/,
      )
      expect(git(repo(), 'show', `agents/${agent}:steps/${agent}/001/request.json`)).toBe(bytes) // left as it is
      // And the agent goes on: its next step holds against step 002 as usual.
      expect((await post(route, { model: MODEL, max_tokens: 8, messages: msgs('three') })).status).toBe(200)
    },
  )
})

describe('count_tokens', () => {
  it('writes nothing to disk for a workspace that does not exist', async () => {
    const r = await post('/w/counting/a/main/v1/messages/count_tokens', {
      model: MODEL,
      messages: msgs('hi'),
    })
    expect(r.status).toBe(200)
    expect(fs.existsSync(path.join(p.home, 'workspaces', 'counting'))).toBe(false)
  })
})
