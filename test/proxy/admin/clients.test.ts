/**
 * The tool-host admin API of a running proxy: registration at serve start, list/get/load/unload/
 * loaded with whole-or-nothing refusals, routed calls answered in band, and the `clients` tool.
 */
import fs from 'node:fs'
import path from 'node:path'
import * as say from '../../../proxy/core/tool-sentences'
import { readLoadedSet } from '../../../proxy/store/loaded-sets'
import { CLIENTS_TOOL_SCHEMA } from '../../../proxy/tools/clients-tool'
import { startProxy, type Proxy } from '../../support/harness'
import { stdioClient, textOf } from '../tools/support'

let p: Proxy
beforeAll(async () => {
  p = await startProxy({
    config: {
      clients: {
        fx: {
          ...stdioClient({
            FIXTURE_EXTRA: JSON.stringify([{ name: 'dotted.name', inputSchema: { type: 'object' } }]),
          }),
          workspaces: ['default', 'proj'],
        },
        far: { ...stdioClient(), workspaces: ['elsewhere'] },
      },
    },
  })
})
afterAll(() => p.close())

interface Answer {
  status: number
  body: Record<string, unknown> & { message?: string; error?: { code: string; message: string } }
}

async function admin(method: 'GET' | 'POST', route: string, body?: unknown): Promise<Answer> {
  const res = await fetch(`${p.url}${route}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return { status: res.status, body: (await res.json()) as Answer['body'] }
}

const load = (agent: string, client: string, tools: string[], workspace = 'default') =>
  admin('POST', '/_holdfast/clients/load', { workspace, agent, client, tools })
const call = (agent: string, name: string, input: unknown) =>
  admin('POST', '/_holdfast/tools/call', { workspace: 'default', agent, name, input })
const loadedNames = (agent: string, ws = 'default') =>
  readLoadedSet(p.home, ws, agent).map((e) => `${e.client}_${e.tool.name}`)

describe('the clients admin API', () => {
  it("writes the registration files from holdfast.yaml's lists at serve start", () => {
    const dir = (c: string) => fs.readdirSync(path.join(p.home, 'clients', c, 'workspaces')).sort()
    expect([dir('fx'), dir('far')]).toEqual([['default', 'proj'], ['elsewhere']])
  })

  it('lists every client with its tool count, or only those registered in a workspace', async () => {
    const all = await admin('GET', '/_holdfast/clients/list')
    const only = await admin('GET', '/_holdfast/clients/list?workspace=proj')
    expect(all.status).toBe(200)
    const rows = all.body.clients as {
      client: string
      connected: boolean
      tools: unknown[]
      observed_at: string
    }[]
    expect(rows.map((r) => [r.client, r.connected, r.tools.length])).toEqual([
      ['far', true, 11],
      ['fx', true, 12],
    ])
    expect(all.body.message).toMatch(
      /^far: stdio, connected, 11 tools, observed at \S+, workspaces: elsewhere\nfx: /,
    )
    expect((only.body.clients as { client: string }[]).map((r) => r.client)).toEqual(['fx'])
  })

  it('gets a client: each tool, its description and the name it loads as', async () => {
    const r = await admin('GET', '/_holdfast/clients/get?client=fx')
    expect(r.body.message).toContain('  echo (loads as fx_echo): Echo the text back.')
    expect(r.body.message).toContain('  plain (loads as fx_plain)\n')
    const unknown = await admin('GET', '/_holdfast/clients/get?client=nobody')
    expect([unknown.status, unknown.body.error]).toEqual([
      404,
      { code: 'CLIENT_UNKNOWN', message: say.unknownClient('nobody') },
    ])
  })

  it('loads every named tool the client advertises now, and says who can call them', async () => {
    const r = await load('loader', 'fx', ['shout', 'echo'])
    expect(r.status).toBe(200)
    expect(r.body.message).toBe(
      `loaded fx_echo, fx_shout into default/loader from client "fx". ${say.whoCanCall('default', 'loader')}`,
    )
    expect(loadedNames('loader')).toEqual(['fx_echo', 'fx_shout'])
    expect(readLoadedSet(p.home, 'default', 'loader')[0]?.tool.input_schema).toEqual({
      type: 'object',
      properties: { text: { type: 'string' } },
      required: ['text'],
    })
  })

  it('refuses a whole load, naming each problem, and writes nothing', async () => {
    const cases = await Promise.all([
      load('refused', 'fx', ['echo', 'nope']),
      load('refused', 'fx', ['dotted.name']),
      load('refused', 'far', ['echo']),
      load('refused', 'nobody', ['echo']),
      load('refused', 'fx', []),
    ])
    expect(cases.map((c) => [c.status, c.body.error?.code])).toEqual(Array(5).fill([409, 'LOAD_REFUSED']))
    expect(cases.map((c) => c.body.error?.message)).toEqual([
      say.loadRefused('default', 'refused', say.notAdvertised('fx', 'nope')),
      say.loadRefused(
        'default',
        'refused',
        'presented name "fx_dotted.name" is not callable (14 characters): a tool name a provider accepts is 1 to 64 ASCII letters, digits, "_" or "-"',
      ),
      say.loadRefused('default', 'refused', say.notRegistered('far', 'default')),
      say.loadRefused('default', 'refused', say.unknownClient('nobody')),
      say.loadRefused('default', 'refused', 'a load from client "fx" must name at least one tool'),
    ])
    expect(fs.existsSync(path.join(p.home, 'loaded', 'default', 'refused.json'))).toBe(false)
  })

  it("unloads named tools or the client's whole set, and refuses a tool that is not loaded, writing nothing", async () => {
    await load('unloader', 'fx', ['echo', 'shout', 'env'])
    const unload = (tools?: string[]) =>
      admin('POST', '/_holdfast/clients/unload', {
        workspace: 'default',
        agent: 'unloader',
        client: 'fx',
        tools,
      })
    const refused = await unload(['echo', 'sleep'])
    expect([refused.status, refused.body.error?.message]).toEqual([
      409,
      say.unloadRefused('default', 'unloader', 'no tool "fx_sleep" is loaded for this agent'),
    ])
    expect(loadedNames('unloader')).toEqual(['fx_echo', 'fx_env', 'fx_shout'])
    expect((await unload(['shout'])).body.unloaded).toEqual(['fx_shout'])
    expect((await unload()).body.unloaded).toEqual(['fx_echo', 'fx_env'])
    expect(loadedNames('unloader')).toEqual([])
    expect((await unload()).body.error?.message).toBe(
      say.unloadRefused('default', 'unloader', say.nothingLoadedFrom('fx', 'default', 'unloader')),
    )
    const loaded = await admin('GET', '/_holdfast/clients/loaded?workspace=default&agent=unloader')
    expect(loaded.body).toEqual({ message: 'nothing is loaded for default/unloader', tools: [] })
  })

  it('routes a call to its client under the advertised name, and answers every refusal in band with 200', async () => {
    await load('caller', 'fx', ['shout', 'fail'])
    expect(await call('caller', 'fx_shout', { text: 'hello' })).toEqual({
      status: 200,
      body: { content: [{ type: 'text', text: 'HELLO' }], is_error: false },
    })
    const refusals = await Promise.all([
      call('caller', 'fx_echo', { text: 'x' }),
      call('caller', 'fx_shout', 'not an object'),
      call('caller', 'fx_fail', {}),
    ])
    expect(
      refusals.map((r) => [r.status, r.body.is_error, textOf(r.body as { content: unknown[] })]),
    ).toEqual([
      [200, true, say.notLoaded('fx_echo')],
      [200, true, say.notAnObject('fx_shout')],
      [200, true, 'it failed on purpose'],
    ])
  })

  it('refuses in band a call in a workspace the client is not registered in', async () => {
    await load('wanderer', 'fx', ['echo'], 'proj')
    fs.rmSync(path.join(p.home, 'clients', 'fx', 'workspaces', 'proj'))
    try {
      const r = await admin('POST', '/_holdfast/tools/call', {
        workspace: 'proj',
        agent: 'wanderer',
        name: 'fx_echo',
        input: {},
      })
      expect(textOf(r.body as { content: unknown[] })).toBe(say.notRegistered('fx', 'proj'))
    } finally {
      fs.writeFileSync(path.join(p.home, 'clients', 'fx', 'workspaces', 'proj'), '')
    }
  })

  it('publishes the clients tool per dialect and runs its ops as plain text', async () => {
    const anthropicDef = await admin('GET', '/_holdfast/clients/tool')
    const openaiDef = await admin('GET', '/_holdfast/clients/tool?dialect=openai')
    expect(anthropicDef.body).toMatchObject({ name: 'clients', input_schema: CLIENTS_TOOL_SCHEMA })
    expect(openaiDef.body).toMatchObject({
      type: 'function',
      function: { name: 'clients', parameters: CLIENTS_TOOL_SCHEMA },
    })
    expect((await admin('GET', '/_holdfast/clients/tool?dialect=x')).body.error?.code).toBe('BAD_REQUEST')

    const op = async (input: unknown) => {
      const r = await call('self', 'clients', input)
      return [r.body.is_error, textOf(r.body as { content: unknown[] })]
    }
    expect(await op({ op: 'list' })).toEqual([
      false,
      expect.stringMatching(/^fx: stdio, connected, 12 tools/),
    ])
    expect(await op({ op: 'get', client: 'fx' })).toEqual([
      false,
      expect.stringContaining('echo (loads as fx_echo)'),
    ])
    expect(await op({ op: 'load', client: 'fx', tools: ['echo'] })).toEqual([
      false,
      'Loaded. Callable from your next turn: `fx_echo`.',
    ])
    expect(await op({ op: 'load', client: 'fx', tools: ['nope'] })).toEqual([
      true,
      say.loadRefused('default', 'self', say.notAdvertised('fx', 'nope')),
    ])
    expect(await op({ op: 'unload', client: 'fx' })).toEqual([
      false,
      'Unloaded. No longer callable: `fx_echo`.',
    ])
    expect(await op({ op: 'fly' })).toEqual([
      true,
      'the clients tool needs "op": one of "list", "get", "load", "unload"',
    ])
    expect(await op({ op: 'load', client: 'fx' })).toEqual([
      true,
      'op "load" of the clients tool needs "tools": an array of tool names',
    ])
  })

  it('refuses malformed admin requests with their codes', async () => {
    const [unknown, noName, badName, notJson] = await Promise.all([
      admin('GET', '/_holdfast/clients/nothing'),
      admin('POST', '/_holdfast/tools/call', { input: {} }),
      admin('POST', '/_holdfast/clients/load', {
        workspace: '..',
        agent: 'a',
        client: 'fx',
        tools: ['echo'],
      }),
      fetch(`${p.url}/_holdfast/tools/call`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '[',
      }),
    ])
    expect([
      unknown.status,
      noName.status,
      noName.body.error?.code,
      badName.status,
      badName.body.error?.code,
      notJson.status,
    ]).toEqual([404, 400, 'BAD_REQUEST', 400, 'BAD_NAME', 400])
  })
})
