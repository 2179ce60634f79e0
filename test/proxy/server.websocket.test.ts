/**
 * A WebSocket upgrade of a provider path (Codex opens `GET /v1/responses` that way before any
 * HTTP request) is answered 426 at once, in the dialect's envelope, for every addressing form, and
 * never reaches the provider: Codex falls back to HTTP only on a 426 (anything else costs it five
 * retries). A plain GET of the same path still passes through.
 */
import { startProxy, type Proxy } from '../support/harness'
import { rawRequest } from '../support/raw-http'

let p: Proxy
beforeAll(async () => {
  p = await startProxy()
})
afterAll(() => p.close())

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
    'is answered 426 in the responses envelope, addressed by %s, and never reaches the provider',
    async (_how, path, extra) => {
      const before = p.fake.received.length
      const r = await rawRequest(p.url, { method: 'GET', path, headers: { ...UPGRADE, ...extra } })
      expect(r.status).toBe(426)
      expect(r.headers['x-holdfast-error']).toBe('WEBSOCKET_UNSUPPORTED')
      const body = JSON.parse(r.body.toString()) as { error: { type: string; message: string } }
      expect(body.error.type).toBe('invalid_request_error')
      expect(body.error.message).toMatch(/does not proxy WebSockets: GET \/v1\/responses/)
      expect(p.fake.received.length).toBe(before)
    },
  )

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
