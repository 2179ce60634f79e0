/**
 * A WebSocket upgrade holdfast does not carry is answered 426 at once, in the dialect's envelope:
 * Codex falls back to HTTP only on a 426 (anything else costs it five retries). That is every
 * addressing form of the Responses endpoint when its row says `websocket: false` (the provider
 * never sees it), the Responses endpoint when the provider refuses the upgrade (the HTTP-only fake
 * here), and any other provider path. A plain GET of the same path still passes through. The
 * upgrades holdfast carries: test/proxy/http/websocket.test.ts.
 */
import { startProxy, type Proxy } from '../support/harness'
import { rawRequest } from '../support/raw-http'

let p: Proxy
let off: Proxy
beforeAll(async () => {
  p = await startProxy()
  off = await startProxy({
    config: {
      providers: { openai: { dialect: 'openai', base_url: p.fake.openaiBaseUrl, websocket: false } },
    },
  })
})
afterAll(async () => {
  await off.close()
  await p.close()
})

const UPGRADE = {
  connection: 'Upgrade',
  upgrade: 'websocket',
  'sec-websocket-version': '13',
  'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
  authorization: 'Bearer sk-dummy',
}

describe('a WebSocket upgrade', () => {
  it.each([
    ['the bare path', '/v1/responses', {}],
    ['a path prefix', '/w/codex/a/main/v1/responses', {}],
    [
      'the x-holdfast-* headers',
      '/v1/responses',
      { 'x-holdfast-workspace': 'codex', 'x-holdfast-agent': 'main' },
    ],
    ['a query string', '/w/codex/a/main/v1/responses?stream=true', {}],
  ])(
    'is answered 426 in the responses envelope, addressed by %s, when the row says websocket: false, and never reaches the provider',
    async (_how, path, extra) => {
      const before = off.fake.received.length
      const r = await rawRequest(off.url, { method: 'GET', path, headers: { ...UPGRADE, ...extra } })
      expect(r.status).toBe(426)
      expect(r.headers['x-holdfast-error']).toBe('WEBSOCKET_UNSUPPORTED')
      const body = JSON.parse(r.body.toString()) as { error: { type: string; message: string } }
      expect(body.error.type).toBe('invalid_request_error')
      expect(body.error.message).toBe(
        'provider row "openai" is set websocket: false; send it over HTTP (POST /v1/responses)',
      )
      expect(off.fake.received.length).toBe(before)
    },
  )

  it('is answered 426 when the provider refuses the upgrade', async () => {
    const r = await rawRequest(p.url, {
      method: 'GET',
      path: '/w/codex/a/main/v1/responses',
      headers: UPGRADE,
    })
    expect(r.status).toBe(426)
    expect(r.headers['x-holdfast-error']).toBe('WEBSOCKET_UNSUPPORTED')
    expect((JSON.parse(r.body.toString()) as { error: { message: string } }).error.message).toMatch(
      /^provider row "openai" did not take the WebSocket: the provider answered the upgrade 404/,
    )
  })

  it('is answered 426 on a provider path that is not the Responses endpoint, and never reaches the provider', async () => {
    const before = p.fake.received.length
    const r = await rawRequest(p.url, { method: 'GET', path: '/v1/models', headers: UPGRADE })
    expect(r.status).toBe(426)
    expect((JSON.parse(r.body.toString()) as { error: { message: string } }).error.message).toMatch(
      /does not carry a WebSocket on GET \/v1\/models/,
    )
    expect(p.fake.received.length).toBe(before)
  })

  it('leaves a plain GET of the same path to pass through', async () => {
    const before = p.fake.received.length
    const r = await rawRequest(p.url, {
      method: 'GET',
      path: '/v1/responses',
      headers: { authorization: 'Bearer x' },
    })
    expect(r.status).not.toBe(426)
    expect(p.fake.received.length).toBe(before + 1)
  })
})
