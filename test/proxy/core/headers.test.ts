/**
 * proxy/core/headers: request headers and paths as records and logs keep them. Rules: every
 * auth- or secret-looking header (auth, key, token, secret, cookie, password, credential, any
 * case of the name) and every `x-holdfast-*` header is dropped, repeated values are joined with
 * ", "; in a path or URL only the values of credential-carrying query parameters become
 * `REDACTED`, judged by the decoded name, everything else (other parameters, the fragment, a
 * parameter without `=`) byte for byte.
 */
import { redactQuery, sanitizeHeaders } from '../../../proxy/core/headers'

describe('sanitizeHeaders', () => {
  it("keeps Codex's session headers and its turn metadata without the repository URLs it carries", () => {
    // As Codex 0.171.0 sent them from a git work tree (the remote had a user and password, which Codex strips itself).
    const meta = {
      session_id: 's-1',
      thread_id: 't-1',
      turn_id: 'u-1',
      request_kind: 'turn',
      workspaces: {
        '/tmp/w': {
          associated_remote_urls: { origin: 'https://github.com/acme/widgets.git' },
          latest_git_commit_hash: '9274057',
          has_changes: false,
        },
      },
    }
    const kept = sanitizeHeaders({
      'session-id': 's-1',
      'thread-id': 't-1',
      'x-openai-subagent': 'review',
      'x-codex-turn-metadata': JSON.stringify(meta),
    })
    expect(kept['session-id']).toBe('s-1')
    expect(kept['thread-id']).toBe('t-1')
    expect(kept['x-openai-subagent']).toBe('review')
    expect(JSON.parse(kept['x-codex-turn-metadata'] as string)).toEqual({
      ...meta,
      workspaces: { '/tmp/w': { latest_git_commit_hash: '9274057', has_changes: false } },
    })
    expect(JSON.stringify(kept)).not.toContain('github.com')
    expect(sanitizeHeaders({ 'x-codex-turn-metadata': 'not json' })).toEqual({})
    expect(sanitizeHeaders({ 'x-codex-turn-metadata': '[1]' })).toEqual({})
  })

  it.each([
    'authorization',
    'proxy-authorization',
    'x-api-key',
    'x-goog-api-key',
    'api-key',
    'cookie',
    'set-cookie',
    'x-auth-token',
    'x-amz-security-token',
    'x-client-secret',
    'x-password',
    'x-credentials',
    'x-idempotency-key',
  ])('drops %s, a header whose name looks like it carries a secret', (name) => {
    expect(sanitizeHeaders({ [name]: 'secret-value', accept: 'application/json' })).toEqual({
      accept: 'application/json',
    })
  })

  it.each(['x-holdfast-token', 'x-holdfast-role', 'x-holdfast-workspace', 'x-holdfast-agent'])(
    "drops %s, holdfast's own addressing header",
    (name) => {
      expect(sanitizeHeaders({ [name]: 'v' })).toEqual({})
    },
  )

  it('keeps x-holdfast-keep-warm, the step a keep-warm ping keeps warm, so the reports know a ping', () => {
    expect(sanitizeHeaders({ 'x-holdfast-keep-warm': '003', 'x-holdfast-token': 't' })).toEqual({
      'x-holdfast-keep-warm': '003',
    })
  })

  it('keeps the headers a provider keys on and a client identifies itself with, byte for byte', () => {
    // The headers Claude Code 2.1.197 sent, minus its key (test/fixtures/claude-code).
    const kept = {
      accept: 'application/json',
      'anthropic-beta': 'claude-code-20250219,interleaved-thinking-2025-05-14',
      'anthropic-version': '2023-06-01',
      'anthropic-dangerous-direct-browser-access': 'true',
      'content-type': 'application/json',
      'user-agent': 'claude-cli/2.1.197 (external, sdk-cli)',
      'x-app': 'cli',
      'x-claude-code-session-id': '4f9d2c1e-8b7a-4c3d-9e2f-1a2b3c4d5e6f',
      'x-stainless-retry-count': '0',
      'keep-alive': 'timeout=5',
      'x-holdfast': 'not a prefix match',
    }
    expect(sanitizeHeaders({ ...kept, 'x-api-key': 'sk-ant-xyz', 'x-holdfast-token': 't' })).toEqual(kept)
  })

  it('joins a repeated header with ", " and skips an undefined value', () => {
    expect(
      sanitizeHeaders({ 'x-forwarded-for': ['10.0.0.1', '10.0.0.2'], 'x-empty': undefined, 'x-none': [] }),
    ).toEqual({ 'x-forwarded-for': '10.0.0.1, 10.0.0.2', 'x-none': '' })
  })

  it('answers an empty object for no headers', () => {
    expect(sanitizeHeaders({})).toEqual({})
  })
})

describe('redactQuery', () => {
  it.each([
    ['/v1/messages', '/v1/messages'],
    ['/v1/messages?beta=true', '/v1/messages?beta=true'],
    ['/v1/models?key=AIza123&alt=sse', '/v1/models?key=REDACTED&alt=sse'],
    [
      '/x?api_key=a&api-key=b&apikey=c&API_KEY=d',
      '/x?api_key=REDACTED&api-key=REDACTED&apikey=REDACTED&API_KEY=REDACTED',
    ],
    ['/x?x-api-key=a&x-key=b', '/x?x-api-key=REDACTED&x-key=REDACTED'],
    [
      '/x?access_token=a&refresh-token=b&id_token=c&token=d',
      '/x?access_token=REDACTED&refresh-token=REDACTED&id_token=REDACTED&token=REDACTED',
    ],
    [
      '/x?sig=a&signature=b&secret=c&client_secret=d',
      '/x?sig=REDACTED&signature=REDACTED&secret=REDACTED&client_secret=REDACTED',
    ],
    [
      '/x?password=a&passwd=b&pwd=c&session=d&code=e',
      '/x?password=REDACTED&passwd=REDACTED&pwd=REDACTED&session=REDACTED&code=REDACTED',
    ],
    ['/x?auth=a&authorization=b', '/x?auth=REDACTED&authorization=REDACTED'],
    ['/x?key=', '/x?key=REDACTED'],
    ['/x?key=a&key=b', '/x?key=REDACTED&key=REDACTED'],
  ])('redacts the credential parameters of %s', (url, want) => {
    expect(redactQuery(url)).toBe(want)
  })

  it.each([
    ['/x?keyword=a&monkey=b&tokens=3&codex=1', 'names that only contain a credential word'],
    ['/x?key', 'a credential name without "="'],
    ['/x?&&beta=true&', 'empty pairs'],
    ['/x?', 'an empty query'],
  ])('keeps %s as it is (%s)', (url) => {
    expect(redactQuery(url)).toBe(url)
  })

  it('judges a percent-encoded name by its decoded form but keeps the name as written', () => {
    expect(redactQuery('/x?%6Bey=abc&a%5Fkey=1')).toBe('/x?%6Bey=REDACTED&a%5Fkey=1')
    expect(redactQuery('/x?api%5Fkey=abc')).toBe('/x?api%5Fkey=REDACTED')
  })

  it('judges an undecodable name as written instead of throwing', () => {
    expect(redactQuery('/x?%E0%A4%A=1&key=2')).toBe('/x?%E0%A4%A=1&key=REDACTED')
  })

  it('keeps the fragment, and redacts a whole URL without touching scheme, host or path', () => {
    expect(
      redactQuery(
        'https://generativelanguage.googleapis.com/v1beta/models/g:streamGenerateContent?alt=sse&key=AIzaSy#k=v',
      ),
    ).toBe(
      'https://generativelanguage.googleapis.com/v1beta/models/g:streamGenerateContent?alt=sse&key=REDACTED#k=v',
    )
    expect(redactQuery('/x?token=abc#token=def')).toBe('/x?token=REDACTED#token=def')
  })

  it('leaves the value of a kept parameter alone even when it contains "key="', () => {
    expect(redactQuery('/x?q=key=1&token=a=b')).toBe('/x?q=key=1&token=REDACTED')
  })
})
