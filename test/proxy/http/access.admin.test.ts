/**
 * The admin surface (`/_holdfast/…`) and the MCP endpoint require the home's token even when none
 * is configured (DESIGN §4, fourth round): every endpoint refuses a request without it, or with
 * anything that is not it, with 401 TOKEN_REQUIRED in holdfast's envelope, saying nothing of the
 * home and writing nothing; with it (x-holdfast-token, or Authorization: Bearer as MCP clients
 * send it) they answer. Driven with plain HTTP and the MCP SDK's own client.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { rawFetch, startProxy, type Proxy } from '../../support/harness'
import { listTree, postAnthropic, rawRequest } from '../../support/raw-http'

let p: Proxy
const HELLO = '{"model":"claude-fake-1","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}'

beforeAll(async () => {
  p = await startProxy()
  // An agent and a workspace whose names health would show.
  expect((await postAnthropic(p.url, '/w/secret-ws/a/secret-agent/v1/messages', HELLO)).status).toBe(200)
  await p.settled()
})
afterAll(() => p.close())

const ADMIN: [method: string, path: string, body: string | undefined][] = [
  ['GET', '/_holdfast/health', undefined],
  ['GET', '/_holdfast/clients/list', undefined],
  ['POST', '/_holdfast/clients/load', '{"workspace":"w","agent":"a","client":"c","tools":["t"]}'],
  ['POST', '/_holdfast/tools/call', '{"workspace":"w","agent":"a","name":"c_t","input":{}}'],
  ['POST', '/_holdfast/dispatch', '{"argv":["dispatch","r","w","a","--goal","g","--from","config/default"]}'],
  ['POST', '/_holdfast/events/refs', '{"workspace":"w","refs":[]}'],
  ['GET', '/_holdfast/no-such-thing', undefined],
  ['POST', '/w/secret-ws/a/secret-agent/mcp', '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}'],
  ['GET', '/w/secret-ws/a/secret-agent/mcp', undefined],
  ['DELETE', '/mcp', undefined],
]

describe('without the token', () => {
  it.each(ADMIN)(
    'refuses %s %s with 401 TOKEN_REQUIRED, telling nothing and writing nothing',
    async (method, path, body) => {
      const before = listTree(p.home)
      const misses: Record<string, string>[] = [
        {},
        { 'x-holdfast-token': '' },
        { 'x-holdfast-token': p.token.slice(0, -1) },
        { 'x-holdfast-token': `${p.token}=` },
        { 'x-holdfast-token': p.token.toLowerCase() },
        { authorization: `Basic ${p.token}` },
        { authorization: p.token },
        { 'x-holdfast-agent': p.token, cookie: `holdfast_token=${p.token}` },
      ]
      for (const h of misses) {
        const r = await rawRequest(p.url, {
          method,
          path,
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            ...h,
          },
          ...(body ? { body } : {}),
        })
        const text = r.body.toString()
        expect([JSON.stringify(h), r.status, r.headers['x-holdfast-error']]).toEqual([
          JSON.stringify(h),
          401,
          'TOKEN_REQUIRED',
        ])
        expect(JSON.parse(text)).toEqual({ error: { code: 'TOKEN_REQUIRED', message: expect.any(String) } })
        expect(text).not.toContain(p.home)
        expect(text).not.toContain('secret-')
      }
      expect(listTree(p.home)).toEqual(before)
    },
  )

  it('refuses the token in the query string: it is not a place the token is read from', async () => {
    const r = await rawRequest(p.url, { method: 'GET', path: `/_holdfast/health?token=${p.token}` })
    expect(r.status).toBe(401)
  })

  it("refuses the MCP SDK's client: its connect fails with the 401", async () => {
    const client = new Client({ name: 'no-token', version: '1.0.0' })
    const transport = new StreamableHTTPClientTransport(new URL(`${p.url}/w/secret-ws/a/secret-agent/mcp`), {
      fetch: rawFetch,
    })
    await expect(client.connect(transport)).rejects.toThrow(/401|TOKEN_REQUIRED|token/)
    await client.close()
  })
})

describe('with the token', () => {
  it.each([
    ['x-holdfast-token', (t: string) => ({ 'x-holdfast-token': t })],
    ['Authorization: Bearer', (t: string) => ({ authorization: `Bearer ${t}` })],
  ])('answers health with the token in %s', async (_, h) => {
    const r = await rawRequest(p.url, { method: 'GET', path: '/_holdfast/health', headers: h(p.token) })
    expect(r.status).toBe(200)
    expect(JSON.parse(r.body.toString())).toMatchObject({ ok: true, home: p.home })
  })

  it("serves the MCP SDK's client with the token as its bearer", async () => {
    const client = new Client({ name: 'bearer', version: '1.0.0' })
    const transport = new StreamableHTTPClientTransport(new URL(`${p.url}/w/secret-ws/a/secret-agent/mcp`), {
      fetch: rawFetch,
      requestInit: { headers: { authorization: `Bearer ${p.token}` } },
    })
    await client.connect(transport)
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['clients'])
    } finally {
      await client.close()
    }
  })
})
