/**
 * The composition rules over a list of dialects, with one a new dialect outside `/v1/` would be:
 * it declares its own paths and nothing else in the proxy changes.
 */
import { anthropic, openai } from '../../../proxy/dialects'
import { pathsOf } from '../../../proxy/dialects/paths'
import type { Dialect } from '../../../proxy/core/dialect'

/** A dialect served at `/api/chat` with pass-through under `/api/` (its name borrowed: names come from the schema). */
const local: Dialect = {
  ...openai,
  endpoint: '/api/chat',
  countTokensEndpoint: undefined,
  passThrough: { under: ['/api/'], probes: [] },
}
const paths = pathsOf([anthropic, openai, local])
const route = (method: string, path: string, headers = {}) => {
  const r = paths.routeAt(method, path, headers)
  return r && `${r.kind} ${r.dialect === local ? 'local' : r.dialect.name}`
}

describe('paths composed from the dialects given', () => {
  it('records, passes through and answers preflights on the paths a new dialect declares', () => {
    expect(route('POST', '/api/chat')).toBe('step local')
    expect(route('GET', '/api/tags')).toBe('pass local')
    expect(route('OPTIONS', '/api/chat')).toBe('preflight local')
    expect(paths.envelopeAt('/w/ws/a/main/api/tags')).toBe(local)
    expect(paths.envelopeAt('/api')).toBe(local)
    expect(paths.PASS_THROUGH_PREFIXES).toEqual(['/v1/', '/api/'])
  })

  it("keeps a probe its declaring dialect's though another dialect's prefix covers it", () => {
    expect(route('HEAD', '/api/hello')).toBe('pass anthropic')
    expect(route('GET', '/api/hello')).toBeUndefined()
    expect(paths.envelopeAt('/api/hello')).toBe(anthropic)
  })

  it('leaves the other dialects their paths, and a path no dialect declares to nobody', () => {
    expect(route('POST', '/v1/messages')).toBe('step anthropic')
    expect(route('GET', '/v1/models')).toBe('pass openai')
    expect(route('GET', '/v2/models')).toBeUndefined()
    expect(pathsOf([]).envelopeAt('/v1/messages')).toBeUndefined()
  })

  it('gives a shared path to its claimant, else the first that claims nothing, else the first', () => {
    const claimer = (name: string, header: string): Dialect => ({
      ...openai,
      endpoint: `/${name}`,
      passThrough: { under: ['/x/'], probes: [], claims: { headers: [header], prefixes: [`/x/${name}`] } },
    })
    const [a, b] = [claimer('a', 'x-a'), claimer('b', 'x-b')]
    const shared = pathsOf([a, b])
    expect(shared.passThroughDialect('/x/other', { 'x-b': '1' })).toBe(b)
    expect(shared.passThroughDialect('/x/b/more', {})).toBe(b)
    expect(shared.passThroughDialect('/x/other', {})).toBe(a)
    const open = { ...local, passThrough: { under: ['/x/'], probes: [] } }
    expect(pathsOf([a, open]).passThroughDialect('/x/other', {})).toBe(open)
  })
})
