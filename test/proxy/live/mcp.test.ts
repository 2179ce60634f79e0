/**
 * holdfast's MCP endpoint, driven by the MCP SDK's own client over streamable HTTP: `clients`
 * plus the agent's loaded set; list, get, load, call, unload through the `clients` tool; every
 * load act (the tool, the admin endpoint) reaches each open session of that agent as
 * `tools/list_changed`; refusals, a host that hangs and a failing tool answer in band; a
 * session belongs to the agent it was opened for; the `/_holdfast/` guards apply.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { eventually, startProxy, type Proxy } from '../../support/harness'
import { stdioClient } from '../tools/support'

let p: Proxy
const open: Client[] = []

beforeAll(async () => {
  p = await startProxy({
    config: {
      clients: {
        fx: { ...stdioClient(), workspaces: ['default'], timeout_ms: 1500 },
        other: { ...stdioClient(), workspaces: ['elsewhere'] },
      },
    },
  })
})
afterEach(async () => {
  await Promise.allSettled(open.splice(0).map((c) => c.close()))
})
afterAll(() => p.close())

/** A connected SDK client for an agent's endpoint; `changes` counts list_changed notifications. */
async function connect(
  agent: string,
  ws = 'default',
  name = 'test-harness',
): Promise<{ client: Client; changes: () => number }> {
  const client = new Client({ name, version: '1.0.0' })
  let changes = 0
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    changes++
  })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${p.url}/w/${ws}/a/${agent}/mcp`)))
  open.push(client)
  return { client, changes: () => changes }
}

const names = async (c: Client): Promise<string[]> => (await c.listTools()).tools.map((t) => t.name)
const text = (r: unknown): string =>
  ((r as { content: { text: string }[] }).content[0] as { text: string }).text

describe('the MCP endpoint', () => {
  it('serves the clients tool and, after a load, the loaded tools under their presented names', async () => {
    const { client, changes } = await connect('a1')
    expect(await names(client)).toEqual(['clients'])
    const list = await client.callTool({ name: 'clients', arguments: { op: 'list' } })
    expect(list.isError).toBe(false)
    expect(text(list)).toMatch(/^fx: stdio/)
    expect(text(list)).not.toMatch(/other/)
    const get = await client.callTool({ name: 'clients', arguments: { op: 'get', client: 'fx' } })
    expect(text(get)).toContain('echo')
    const load = await client.callTool({
      name: 'clients',
      arguments: { op: 'load', client: 'fx', tools: ['echo', 'fail', 'sleep'] },
    })
    expect(load.isError).toBe(false)
    expect(text(load)).toBe('Loaded. Callable from your next turn: `fx_echo`, `fx_fail`, `fx_sleep`.')
    await eventually(() => changes() >= 1, 5000, 'list_changed after the load')
    const tools = (await client.listTools()).tools
    expect(tools.map((t) => t.name)).toEqual(['clients', 'fx_echo', 'fx_fail', 'fx_sleep'])
    expect(tools[1]).toMatchObject({ description: 'Echo the text back.', inputSchema: { type: 'object' } })
    const echoed = await client.callTool({ name: 'fx_echo', arguments: { text: 'hello' } })
    expect(echoed.isError).toBe(false)
    expect(text(echoed)).toContain('hello')
  })

  it("answers Claude Code's load with the names it gives this server's tools, and that a deferred one needs fetching first", async () => {
    const { client } = await connect('a4', 'default', 'claude-code')
    const load = await client.callTool({
      name: 'clients',
      arguments: { op: 'load', client: 'fx', tools: ['echo'] },
    })
    expect(text(load)).toBe(
      'Loaded. Callable from your next turn: `fx_echo` as `mcp__holdfast__fx_echo`. If it is listed as deferred, fetch it with your tool search (ToolSearch) first.',
    )
    expect(text(load)).not.toMatch(/<ws>|<agent>/)
    const unload = await client.callTool({ name: 'clients', arguments: { op: 'unload', client: 'fx' } })
    expect(text(unload)).toBe('Unloaded. No longer callable: `mcp__holdfast__fx_echo`.')
  })

  it('answers refusals, a failing tool and a host that does not answer in time in band', async () => {
    const { client } = await connect('a1')
    const failed = await client.callTool({ name: 'fx_fail', arguments: {} })
    expect(failed.isError).toBe(true)
    const missing = await client.callTool({ name: 'fx_shout', arguments: { text: 'x' } })
    expect(missing.isError).toBe(true)
    expect(text(missing)).toMatch(/fx_shout/)
    const refusedLoad = await client.callTool({
      name: 'clients',
      arguments: { op: 'load', client: 'fx', tools: ['echo', 'nope'] },
    })
    expect(refusedLoad.isError).toBe(true)
    expect(text(refusedLoad)).toMatch(/nope/)
    const t0 = Date.now()
    const slow = await client.callTool({ name: 'fx_sleep', arguments: { ms: 20_000 } })
    expect(slow.isError).toBe(true)
    expect(Date.now() - t0).toBeLessThan(15_000)
  })

  it('tells every open session of the agent when any act changes its loaded set, and only those', async () => {
    const one = await connect('a2')
    const two = await connect('a2')
    const stranger = await connect('a3')
    await one.client.callTool({ name: 'clients', arguments: { op: 'load', client: 'fx', tools: ['echo'] } })
    await eventually(() => one.changes() >= 1 && two.changes() >= 1, 5000, 'both sessions told of the load')
    expect(await names(two.client)).toEqual(['clients', 'fx_echo'])
    // An act through the admin endpoint (what `holdfast clients unload` uses while serve runs).
    const res = await fetch(`${p.url}/_holdfast/clients/unload`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ workspace: 'default', agent: 'a2', client: 'fx', tools: ['echo'] }),
    })
    expect(res.status).toBe(200)
    await eventually(() => one.changes() >= 2 && two.changes() >= 2, 5000, 'both sessions told of the unload')
    expect(await names(one.client)).toEqual(['clients'])
    expect(stranger.changes()).toBe(0)
  })

  it('serves /mcp for the agent the x-holdfast-* headers address', async () => {
    const client = new Client({ name: 'test-harness', version: '1.0.0' })
    const headers = { 'x-holdfast-workspace': 'default', 'x-holdfast-agent': 'a6' }
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${p.url}/mcp`), { requestInit: { headers } }),
    )
    open.push(client)
    await client.callTool({ name: 'clients', arguments: { op: 'load', client: 'fx', tools: ['shout'] } })
    expect(await names(client)).toEqual(['clients', 'fx_shout'])
    expect(p.server.ctx.mcp.openSessions('default', 'a6')).toBe(1)
  })

  it('keeps a session to the agent it was opened for', async () => {
    const { client } = await connect('a4')
    const transport = client.transport as StreamableHTTPClientTransport
    const id = transport.sessionId as string
    const res = await fetch(`${p.url}/w/default/a/intruder/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': id,
        'mcp-protocol-version': '2025-06-18',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    })
    expect(res.status).toBe(403)
    expect(await res.text()).toContain('belongs to default/a4')
  })

  it('refuses a request with an Origin header or a non-JSON body, as /_holdfast/ does', async () => {
    const init = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    })
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
    const withOrigin = await fetch(`${p.url}/w/default/a/a5/mcp`, {
      method: 'POST',
      headers: { ...headers, origin: 'https://evil.example' },
      body: init,
    })
    expect(withOrigin.status).toBe(403)
    const plain = await fetch(`${p.url}/w/default/a/a5/mcp`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'text/plain' },
      body: init,
    })
    expect(plain.status).toBe(403)
    expect(p.server.ctx.mcp.openSessions('default', 'a5')).toBe(0)
  })

  it.each(['HEAD', 'PUT', 'PATCH'])(
    "answers %s with 405 in holdfast's envelope with x-holdfast-error and Allow (a HEAD answer without its body)",
    async (method) => {
      const json = method === 'HEAD' ? {} : { headers: { 'content-type': 'application/json' }, body: '{}' }
      const res = await fetch(`${p.url}/w/ws/a/main/mcp`, { method, ...json })
      expect([res.status, res.headers.get('x-holdfast-error'), res.headers.get('allow')]).toEqual([
        405,
        'METHOD_NOT_ALLOWED',
        'GET, POST, DELETE',
      ])
      const text = await res.text()
      if (method === 'HEAD') expect(text).toBe('')
      else
        expect(JSON.parse(text)).toEqual({
          error: { code: 'METHOD_NOT_ALLOWED', message: expect.stringContaining(method) },
        })
    },
  )

  it('names every refusal outside a session in x-holdfast-error, its JSON-RPC body kept for MCP clients', async () => {
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
    const url = `${p.url}/w/default/a/a6/mcp`
    const { client } = await connect('a6')
    const id = (client.transport as StreamableHTTPClientTransport).sessionId as string
    const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })
    const answers = [
      await fetch(url, { method: 'POST', headers, body: '{' }),
      await fetch(url, { method: 'GET', headers }),
      await fetch(url, { method: 'POST', headers: { ...headers, 'mcp-session-id': 'gone' }, body: list }),
      await fetch(`${p.url}/w/default/a/a7/mcp`, {
        method: 'POST',
        headers: { ...headers, 'mcp-session-id': id },
        body: list,
      }),
    ]
    const got = await Promise.all(
      answers.map(async (r) => [
        r.status,
        r.headers.get('x-holdfast-error'),
        ((await r.json()) as { jsonrpc: string }).jsonrpc,
      ]),
    )
    expect(got).toEqual([
      [400, 'BAD_JSON', '2.0'],
      [400, 'MCP_NO_SESSION', '2.0'],
      [404, 'MCP_SESSION_UNKNOWN', '2.0'],
      [403, 'MCP_SESSION_REFUSED', '2.0'],
    ])
  })
})
