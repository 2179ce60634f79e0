/**
 * The provider's side of a WebSocket: its URL and headers (the client's by upstream.ts's rules,
 * minus the handshake's own, the row's key), and an open that resolves once, with the socket and
 * the 101's headers, or with why there is none.
 */
import net from 'node:net'
import { openUpstreamSocket, socketHeaders, socketUrl } from '../../../proxy/http/upstream-socket'
import { type FakeResponsesWs, startFakeResponsesWs, UPGRADE_HEADERS } from '../../support/fake-responses-ws'

const OPTS = { deflate: false, maxPayload: 1024 * 1024 }

test('the socket URL is the provider URL in ws:// or wss://, its path and query kept', () => {
  expect(socketUrl(new URL('https://api.openai.com/v1/responses?x=1')).href).toBe(
    'wss://api.openai.com/v1/responses?x=1',
  )
  expect(socketUrl(new URL('http://127.0.0.1:9/v1/responses')).href).toBe('ws://127.0.0.1:9/v1/responses')
})

test('the upgrade carries the client’s headers without hop-by-hop, Sec-WebSocket-*, Host or x-holdfast-*, and the row’s key when it names one', () => {
  const client = {
    host: '127.0.0.1:8787',
    connection: 'Upgrade',
    upgrade: 'websocket',
    'sec-websocket-key': 'k',
    'sec-websocket-version': '13',
    'sec-websocket-extensions': 'permessage-deflate',
    'x-holdfast-agent': 'a',
    authorization: 'Bearer client',
    'openai-beta': 'responses_websockets=2026-02-06',
  }
  expect(socketHeaders(client, { dialect: 'openai', base_url: 'http://x' }, undefined)).toEqual({
    authorization: 'Bearer client',
    'openai-beta': 'responses_websockets=2026-02-06',
  })
  expect(
    socketHeaders(client, { dialect: 'openai', base_url: 'http://x', api_key_env: 'K' }, 'sk-row'),
  ).toEqual({
    authorization: 'Bearer sk-row',
    'openai-beta': 'responses_websockets=2026-02-06',
  })
})

describe('opening the provider’s socket', () => {
  let fake: FakeResponsesWs
  let refusing: FakeResponsesWs
  beforeAll(async () => {
    fake = await startFakeResponsesWs()
    refusing = await startFakeResponsesWs({ refuseUpgrade: 403 })
  })
  afterAll(async () => {
    await fake.close()
    await refusing.close()
  })

  it('resolves with the open socket and the 101’s headers', async () => {
    const o = await openUpstreamSocket(
      new URL(`${fake.openaiBaseUrl}/responses`),
      {},
      OPTS,
      new AbortController().signal,
    )
    expect(o.ok).toBe(true)
    if (!o.ok) return
    expect(o.headers['x-codex-turn-state']).toBe(UPGRADE_HEADERS['x-codex-turn-state'])
    o.socket.close()
  })

  it('resolves with the status of an upgrade the provider refuses', async () => {
    const o = await openUpstreamSocket(
      new URL(`${refusing.openaiBaseUrl}/responses`),
      {},
      OPTS,
      new AbortController().signal,
    )
    expect(o).toEqual({ ok: false, status: 403, reason: 'the provider answered the upgrade 403' })
  })

  it('resolves without a status when the provider cannot be reached', async () => {
    const port = await new Promise<number>((r) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as net.AddressInfo).port
        s.close(() => r(p))
      })
    })
    const o = await openUpstreamSocket(
      new URL(`http://127.0.0.1:${port}/v1/responses`),
      {},
      OPTS,
      new AbortController().signal,
    )
    expect(o.ok).toBe(false)
    expect(!o.ok && o.status).toBeNull()
    expect(!o.ok && o.reason).toMatch(/could not be reached: .*ECONNREFUSED/)
  })

  it('gives up when the client goes away while it opens', async () => {
    const hung = net.createServer(() => undefined).listen(0, '127.0.0.1')
    await new Promise((r) => hung.once('listening', r))
    const ac = new AbortController()
    const opening = openUpstreamSocket(
      new URL(`http://127.0.0.1:${(hung.address() as net.AddressInfo).port}/v1/responses`),
      {},
      OPTS,
      ac.signal,
    )
    setTimeout(() => ac.abort(), 20)
    expect(await opening).toEqual({
      ok: false,
      status: null,
      reason: 'the client went away before the provider answered',
    })
    hung.close()
  })
})
