/**
 * The WebSocket edge: the upgrade of the Responses endpoint is guarded as HTTP is (loopback Host,
 * the token, Origin), addressed as HTTP is (path prefix, x-holdfast-* headers), opened upstream
 * with the client's headers minus the handshake's and holdfast's, answered with the 101 headers
 * Codex reads, permessage-deflate as offered, frames far above 1 MiB both ways; a refusal never
 * reaches the provider.
 */
import { type FakeResponsesWs, startFakeResponsesWs, UPGRADE_HEADERS } from '../../support/fake-responses-ws'
import { eventually, gitBytes, startProxy, type Proxy } from '../../support/harness'
import { rawRequest } from '../../support/raw-http'
import { message, openSocket, tool, turn, typeOf, wsUrl } from '../../support/socket-client'

let fake: FakeResponsesWs
let p: Proxy
let strict: Proxy
const TOKEN = 'hf-test-token-websocket'

beforeAll(async () => {
  fake = await startFakeResponsesWs()
  const providers = { openai: { dialect: 'openai' as const, base_url: fake.openaiBaseUrl } }
  p = await startProxy({ config: { providers } })
  strict = await startProxy({ config: { providers, token: TOKEN } })
})
afterAll(async () => {
  await strict.close()
  await p.close()
  await fake.close()
})
beforeEach(() => fake.reset())

const UPGRADE = {
  connection: 'Upgrade',
  upgrade: 'websocket',
  'sec-websocket-version': '13',
  'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
}
const frame = (text: string): object => ({
  type: 'response.create',
  model: 'gpt-fake-1',
  tools: [tool('exec_command')],
  input: [message('user', text)],
})

describe('the WebSocket edge', () => {
  it('answers with the 101 headers Codex reads from the provider’s 101', async () => {
    const s = await openSocket(wsUrl(p.url, '/w/edge/a/hdr/v1/responses'))
    for (const [k, v] of Object.entries(UPGRADE_HEADERS)) expect(s.headers[k]).toBe(v)
    s.ws.close()
  })

  it('opens the provider socket with the client’s headers minus the handshake’s and holdfast’s own', async () => {
    const s = await openSocket(wsUrl(p.url, '/v1/responses'), {
      authorization: 'Bearer sk-client',
      'openai-beta': 'responses_websockets=2026-02-06',
      'session-id': 's-1',
      'x-holdfast-workspace': 'edge',
      'x-holdfast-agent': 'byheader',
    })
    await turn(s, frame('hello'))
    s.ws.close()
    const h = fake.upgrades[0]!.headers
    expect(h).toMatchObject({
      authorization: 'Bearer sk-client',
      'openai-beta': 'responses_websockets=2026-02-06',
      'session-id': 's-1',
    })
    expect(Object.keys(h).filter((k) => k.startsWith('x-holdfast-'))).toEqual([])
    expect(h['sec-websocket-key']).not.toBe(UPGRADE['sec-websocket-key'])
    await p.settled()
    // Addressed by the x-holdfast-* headers, as for HTTP.
    expect(
      gitBytes(p.repo('edge'), 'show', 'agents/byheader:steps/byheader/001/frame.json').toString(),
    ).toContain('hello')
  })

  it('negotiates permessage-deflate when the client offers it, and carries frames far above 1 MiB both ways', async () => {
    const big = 'x'.repeat(3 * 1024 * 1024)
    fake.enqueue({ text: big })
    const s = await openSocket(wsUrl(p.url, '/w/edge/a/big/v1/responses'), {}, { deflate: true })
    expect(String(s.headers['sec-websocket-extensions'])).toContain('permessage-deflate')
    const events = await turn(s, frame(big))
    s.ws.close()
    expect(fake.frames[0]!.data.length).toBeGreaterThan(3 * 1024 * 1024)
    expect(events.some((e) => typeOf(e) === 'response.output_text.done' && e.length > 3 * 1024 * 1024)).toBe(
      true,
    )
    expect(String(fake.upgrades[0]!.headers['sec-websocket-extensions'])).toContain('permessage-deflate')
  })

  it('offers no permessage-deflate upstream when the client offered none', async () => {
    const s = await openSocket(wsUrl(p.url, '/w/edge/a/plain/v1/responses'))
    expect(s.headers['sec-websocket-extensions']).toBeUndefined()
    s.ws.close()
    await eventually(() => fake.upgrades.length === 1)
    expect(fake.upgrades[0]!.headers['sec-websocket-extensions']).toBeUndefined()
  })

  it.each([
    ['a Host that is not loopback', { host: 'evil.example:8787' }, 'HOST_REFUSED'],
    ['an Origin', { origin: 'https://evil.example' }, 'ORIGIN_REFUSED'],
  ])('refuses an upgrade with %s before the provider sees it', async (_what, extra, code) => {
    const r = await rawRequest(p.url, {
      method: 'GET',
      path: '/v1/responses',
      headers: { ...UPGRADE, ...extra },
    })
    expect(r.headers['x-holdfast-error']).toBe(code)
    expect(fake.upgrades).toHaveLength(0)
  })

  it('refuses an upgrade without the configured token, and takes one that carries it as its API key (not forwarded)', async () => {
    const r = await rawRequest(strict.url, { method: 'GET', path: '/v1/responses', headers: UPGRADE })
    expect([r.status, r.headers['x-holdfast-error']]).toEqual([401, 'TOKEN_REQUIRED'])
    expect(fake.upgrades).toHaveLength(0)
    const s = await openSocket(wsUrl(strict.url, '/w/edge/a/tok/v1/responses'), {
      authorization: `Bearer ${TOKEN}`,
    })
    await turn(s, frame('with the token'))
    s.ws.close()
    expect(fake.upgrades[0]!.headers.authorization).toBeUndefined()
  })
})
