/**
 * The guard and a request body's content-encoding: holdfast records and forwards the bytes a
 * client sent and reads them as JSON, so a compressed body on an endpoint it reads (a step,
 * count_tokens, the admin surface, the MCP endpoint) is refused before it is read, with 415
 * UNSUPPORTED_ENCODING naming the encoding, in the path's envelope; `identity` is no encoding.
 */
import path from 'node:path'
import zlib from 'node:zlib'
import { startProxy, type Proxy } from '../../support/harness'
import { listTree, postAnthropic, postOpenai } from '../../support/raw-http'

const HELLO = '{"model":"claude-fake-1","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}'
let p: Proxy
beforeAll(async () => {
  p = await startProxy()
})
afterAll(() => p.close())

describe('a request body with a content-encoding', () => {
  it.each([
    ['gzip', zlib.gzipSync(HELLO)],
    ['deflate', zlib.deflateSync(HELLO)],
    ['br', zlib.brotliCompressSync(HELLO)],
    ['gzip, br', zlib.brotliCompressSync(zlib.gzipSync(HELLO))],
  ])(
    'is refused on /v1/messages with 415 UNSUPPORTED_ENCODING naming %s, nothing sent or written',
    async (encoding, body) => {
      const a = await postAnthropic(p.url, '/w/enc/a/main/v1/messages', body, {
        'content-encoding': encoding,
      })
      expect([a.status, a.headers['x-holdfast-error']]).toEqual([415, 'UNSUPPORTED_ENCODING'])
      const e = JSON.parse(a.body.toString()) as { type: string; error: { type: string; message: string } }
      expect(e.error.type).toBe('invalid_request_error')
      expect(e.error.message).toContain(`content-encoding: ${encoding}`)
      await p.settled()
      expect(p.fake.received).toHaveLength(0)
      expect(listTree(path.join(p.home, 'workspaces'))).toEqual([])
    },
  )

  it("is refused on an openai step in the openai envelope and on the admin surface in holdfast's own", async () => {
    const oai = await postOpenai(p.url, '/w/enc/a/main/v1/chat/completions', zlib.gzipSync('{}'), {
      'content-encoding': 'gzip',
    })
    expect([oai.status, oai.headers['x-holdfast-error']]).toEqual([415, 'UNSUPPORTED_ENCODING'])
    expect(JSON.parse(oai.body.toString())).toMatchObject({
      error: { type: 'invalid_request_error', param: null },
    })
    const admin = await fetch(`${p.url}/_holdfast/tools/call`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: zlib.gzipSync('{}'),
    })
    expect([admin.status, admin.headers.get('x-holdfast-error')]).toEqual([415, 'UNSUPPORTED_ENCODING'])
    expect(await admin.json()).toEqual({
      error: { code: 'UNSUPPORTED_ENCODING', message: expect.stringContaining('gzip') },
    })
  })

  it('is taken when the encoding is identity', async () => {
    const a = await postAnthropic(p.url, '/w/enc/a/main/v1/messages', HELLO, {
      'content-encoding': 'identity',
    })
    expect(a.status).toBe(200)
  })
})
