/**
 * proxy/admin: the `/_holdfast/` router of a running proxy (startProxy and the fake upstream).
 * Rules: `GET /_holdfast/health` answers the process, the requests in flight and every agent's
 * numbering (`ok` false while closing), whatever the query string; every other method or path that
 * no admin module owns is NOT_FOUND naming method and path, in holdfast's own `{error}` envelope
 * with the `x-holdfast-error` header; the clients, dispatch and events paths reach their modules.
 */
import { eventually, startProxy, type Proxy } from '../support/harness'
import { postAnthropic, rawRequest } from '../support/raw-http'

let p: Proxy
beforeAll(async () => {
  p = await startProxy()
})
afterAll(() => p.close())

interface Health {
  ok: boolean
  pid: number
  home: string
  uptime_s: number
  in_flight: number
  memory_mb: Record<string, number> & { commit_worker: { heapUsed: number; heapTotal: number } | null }
  previous_cache: number
  commit_backlog: { steps: number; limit: number }
  agents: { workspace: string; agent: string; next_step: number; committed: number; stalled: string | null }[]
  idle_collection_ms: { server: number | null; commit_worker: number | null }
  malloc_trim_ms: { server: number | null; commit_worker: number | null }
}

const health = async (query = ''): Promise<Health> => {
  const r = await fetch(`${p.url}/_holdfast/health${query}`)
  expect(r.status).toBe(200)
  return (await r.json()) as Health
}

const step = (agent: string, url = p.url) =>
  postAnthropic(
    url,
    `/w/default/a/${agent}/v1/messages`,
    JSON.stringify({
      model: 'claude-sonnet-4-5',
      max_tokens: 16,
      messages: [{ role: 'user', content: 'hi' }],
    }),
  )

describe('GET /_holdfast/health', () => {
  it('answers the process: pid, home, uptime and memory in MB, with any query string', async () => {
    const h = await health('?verbose=1')
    expect(h).toMatchObject({ ok: true, pid: process.pid, home: p.home })
    expect(Number.isInteger(h.uptime_s) && h.uptime_s >= 0).toBe(true)
    const rss = process.memoryUsage().rss / 1048576
    expect(h.memory_mb.rss).toBeGreaterThan(rss / 4)
    expect(h.memory_mb.rss).toBeLessThan(rss * 4)
    expect(Object.keys(h.memory_mb)).toEqual(expect.arrayContaining(['rss', 'heapUsed', 'heapTotal']))
  })

  it("lists every agent's next step and committed step once its step has landed", async () => {
    expect((await step('healthy')).status).toBe(200)
    await p.settled()
    const h = await health()
    expect(h.agents).toContainEqual({
      workspace: 'default',
      agent: 'healthy',
      next_step: 2,
      committed: 1,
      stalled: null,
      answers_in_memory: [],
    })
  })

  it("answers the commit worker's own heap once it runs, and the commit backlog against its limit", async () => {
    expect((await step('worker-heap')).status).toBe(200)
    await p.settled()
    const h = await health()
    expect(h.commit_backlog).toEqual({ steps: 0, limit: 512 })
    const w = h.memory_mb.commit_worker
    expect(w && Object.keys(w).sort()).toEqual(['arrayBuffers', 'external', 'heapTotal', 'heapUsed'])
    expect(w!.heapUsed).toBeGreaterThan(0)
    expect(w!.heapUsed).toBeLessThanOrEqual(w!.heapTotal)
  })

  it('answers how long each thread’s last idle collection and trim took: none before the server has been idle', async () => {
    const before = await health()
    expect([before.idle_collection_ms.server, before.malloc_trim_ms.server]).toEqual([null, null])
    const quick = await startProxy({ config: { limits: { idle_collect_ms: 100 } } })
    try {
      expect((await step('idle', quick.url)).status).toBe(200)
      await quick.settled()
      const of = async (): Promise<Array<number | null>> => {
        const h = (await (await fetch(`${quick.url}/_holdfast/health`)).json()) as Health
        return [...Object.values(h.idle_collection_ms), ...Object.values(h.malloc_trim_ms)]
      }
      await eventually(
        async () => (await of()).every((ms) => typeof ms === 'number' && ms >= 0),
        5000,
        'both threads collected and trimmed once idle (glibc here)',
      )
    } finally {
      await quick.close()
    }
  })

  it('counts a step waiting on the provider as in flight until it is done', async () => {
    const idle = (await health()).in_flight
    p.fake.enqueue({ delayMs: 400 })
    const slow = step('waiter')
    await eventually(async () => (await health()).in_flight === idle + 1, 3000, 'the step in flight')
    expect((await slow).status).toBe(200)
    await p.settled()
    expect((await health()).in_flight).toBe(idle)
  })

  it('says ok: false while the server is closing', async () => {
    p.server.ctx.closing = true
    try {
      expect((await health()).ok).toBe(false)
    } finally {
      p.server.ctx.closing = false
    }
  })
})

describe('the admin router', () => {
  it.each([
    ['POST', '/_holdfast/health'],
    ['GET', '/_holdfast/nothing'],
    ['GET', '/_holdfast/healthz'],
    ['GET', '/_holdfast/clientsx'],
  ])('answers %s %s with NOT_FOUND naming the method and path', async (method, path) => {
    const r = await rawRequest(p.url, {
      method,
      path,
      headers: { 'content-type': 'application/json', 'x-holdfast-token': p.token },
      ...(method === 'POST' ? { body: '{}' } : {}),
    })
    expect([r.status, r.headers['x-holdfast-error'], r.headers['content-type']]).toEqual([
      404,
      'NOT_FOUND',
      'application/json',
    ])
    expect(JSON.parse(r.body.toString())).toEqual({
      error: { code: 'NOT_FOUND', message: `no such admin endpoint: ${method} ${path}` },
    })
  })

  it('hands the clients, tools, dispatch and events paths to their own modules', async () => {
    const [clients, tool, dispatch, events] = await Promise.all([
      fetch(`${p.url}/_holdfast/clients`),
      fetch(`${p.url}/_holdfast/clients/tool?dialect=openai`),
      fetch(`${p.url}/_holdfast/dispatch`),
      fetch(`${p.url}/_holdfast/events/refs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"refs":[]}',
      }),
    ])
    expect(await clients.json()).toEqual({ message: 'holdfast.yaml declares no clients', clients: [] })
    expect(await tool.json()).toMatchObject({ type: 'function', function: { name: 'clients' } })
    expect([
      dispatch.status,
      ((await dispatch.json()) as { error: { message: string } }).error.message,
    ]).toEqual([404, 'POST /_holdfast/dispatch {argv: [...]}'])
    expect(events.status).toBe(204)
  })
})
