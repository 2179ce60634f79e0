/**
 * The registry's answers about paths (golden): which are recorded, counted, passed through or
 * probed, and which error envelope a path takes, composed from what each dialect declares.
 */
import {
  anthropic,
  dialectByName,
  envelopeAt,
  openai,
  PASS_THROUGH_PREFIXES,
  passThroughDialect,
  routeAt,
} from '../../../proxy/dialects'

describe('the paths the dialects declare, composed by the registry', () => {
  const route = (method: string, path: string, headers = {}) => {
    const r = routeAt(method, path, headers)
    return r && `${r.kind} ${r.dialect.name}`
  }
  const ANTHROPIC = { 'anthropic-version': '2023-06-01' }

  it.each([
    ['POST', '/v1/messages', 'step anthropic'],
    ['POST', '/v1/chat/completions', 'step openai'],
    ['POST', '/v1/responses', 'step responses'],
    ['POST', '/v1/messages/count_tokens', 'count_tokens anthropic'],
    ['POST', '/v1/responses/input_tokens', 'count_tokens responses'],
    ['GET', '/v1/messages', 'pass anthropic'],
    ['GET', '/v1/responses', 'pass responses'],
    ['POST', '/v1/messages/batches', 'pass anthropic'],
    ['POST', '/v1/complete', 'pass anthropic'],
    ['POST', '/v1/completions', 'pass openai'],
    ['GET', '/v1/models', 'pass openai'],
    ['GET', '/v1/responses/resp_1', 'pass openai'],
    ['POST', '/v1/embeddings', 'pass openai'],
    ['OPTIONS', '/v1/chat/completions', 'preflight openai'],
    ['OPTIONS', '/v1/messages', 'preflight anthropic'],
    ['HEAD', '/api/hello', 'pass anthropic'],
    ['OPTIONS', '/api/hello', 'preflight anthropic'],
  ])('routes %s %s as %s', (method, path, want) => {
    expect(route(method, path)).toBe(want)
  })

  it('routes a WebSocket upgrade of a provider path as one (answered 426), whatever the dialect', () => {
    const up = { upgrade: 'websocket', connection: 'Upgrade' }
    expect(route('GET', '/v1/responses', up)).toBe('websocket responses')
    expect(route('GET', '/v1/messages', { upgrade: 'WebSocket' })).toBe('websocket anthropic')
    expect(route('GET', '/v1/models', up)).toBe('websocket openai')
    expect(route('GET', '/v1/responses', { upgrade: 'h2c' })).toBe('pass responses')
    expect(route('POST', '/v1/responses', up)).toBe('step responses')
    expect(route('GET', '/api/hello', up)).toBeUndefined()
    expect(route('GET', '/x/v1/responses', up)).toBeUndefined()
  })

  it('answers nothing off the provider paths, and nothing but HEAD and OPTIONS on a probe path', () => {
    for (const path of [
      '/',
      '/v1',
      '/v2/messages',
      '/api',
      '/api/hello/',
      '/x/v1/models',
      '/_holdfast/health',
    ])
      for (const method of ['GET', 'HEAD', 'POST', 'OPTIONS']) expect(route(method, path)).toBeUndefined()
    for (const method of ['GET', 'POST', 'DELETE']) expect(route(method, '/api/hello')).toBeUndefined()
  })

  it('gives a shared path to the dialect whose header it carries, and an endpoint always to its own', () => {
    expect(route('GET', '/v1/models', ANTHROPIC)).toBe('pass anthropic')
    expect(route('OPTIONS', '/v1/embeddings', ANTHROPIC)).toBe('preflight anthropic')
    expect(route('GET', '/v1/chat/completions', ANTHROPIC)).toBe('pass openai')
    expect(route('POST', '/v1/responses', ANTHROPIC)).toBe('step responses')
    expect(passThroughDialect('/v1/models', { 'anthropic-version': undefined })).toBe(openai)
    expect(passThroughDialect('/v2/models', ANTHROPIC)).toBeUndefined()
  })

  it('composes one prefix list from what each dialect declares', () => {
    expect(PASS_THROUGH_PREFIXES).toEqual(['/v1/'])
    expect(anthropic.passThrough).toEqual({
      under: ['/v1/'],
      probes: ['/api/hello'],
      claims: { headers: ['anthropic-version'], prefixes: ['/v1/messages', '/v1/complete'] },
    })
    expect(openai.passThrough).toEqual({ under: ['/v1/'], probes: [] })
    expect(dialectByName('responses')?.passThrough).toBeUndefined()
  })

  it("gives an answer on the first provider path in a URL its dialect's envelope, and none elsewhere", () => {
    const envelope = (path: string, headers = {}) => envelopeAt(path, headers)?.name
    expect(envelope('/v1/messages')).toBe('anthropic')
    expect(envelope('/w/ws/a/main/v1/responses')).toBe('responses')
    expect(envelope('/w/ws/a/main/v1/models')).toBe('openai')
    expect(envelope('/w/ws/a/main/v1/models', ANTHROPIC)).toBe('anthropic')
    expect(envelope('/w/ws/a/main/api/hello')).toBe('anthropic')
    expect(envelope('/v1')).toBe('openai')
    expect(envelope('/w/v1/a/b/v1/messages')).toBe('openai')
    for (const path of ['/', '/w/ws/a/main', '/v1beta/models', '/api/hello/x', 'api.anthropic.com:443'])
      expect(envelope(path)).toBeUndefined()
  })
})
