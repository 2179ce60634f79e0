/** The header rules of proxy/upstream.ts as pure functions: what reaches the provider and the client. */
import { forwardHeaders, responseHeaders, upstreamUrl } from '../../proxy/upstream'

const anthropicRow = { dialect: 'anthropic' as const, base_url: 'https://api.anthropic.com' }
const openaiRow = { dialect: 'openai' as const, base_url: 'https://api.openai.com/v1' }

describe('upstream header rules', () => {
  it('drops response headers the provider named in Connection, as well as hop-by-hop ones', () => {
    const out = responseHeaders({
      connection: 'x-trace, keep-alive',
      'x-trace': 'abc',
      'keep-alive': 'timeout=5',
      'transfer-encoding': 'chunked',
      'request-id': 'req_1',
      'retry-after': '7',
    })
    expect(out).toEqual({ 'request-id': 'req_1', 'retry-after': '7' })
  })

  it('sets host and content-length from what is sent, and the row key over the client key', () => {
    const out = forwardHeaders(
      {
        host: '127.0.0.1:8787',
        'content-length': '5',
        authorization: 'Bearer client',
        'x-holdfast-agent': 'a',
      },
      new URL('https://api.anthropic.com/v1/messages'),
      42,
      anthropicRow,
      'sk-row',
    )
    expect(out).toEqual({ host: 'api.anthropic.com', 'content-length': '42', 'x-api-key': 'sk-row' })
  })

  it('maps /v1/X to <base_url>/X for openai rows and keeps the query', () => {
    expect(upstreamUrl(openaiRow, '/v1/chat/completions?x=1').href).toBe(
      'https://api.openai.com/v1/chat/completions?x=1',
    )
    expect(upstreamUrl(anthropicRow, '/v1/messages?beta=true').href).toBe(
      'https://api.anthropic.com/v1/messages?beta=true',
    )
  })
})
