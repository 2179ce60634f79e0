/**
 * proxy/http/access: where a request may carry holdfast's token (x-holdfast-token, x-api-key,
 * Authorization: Bearer) and every variant that is not the token; the refusals' codes and words;
 * the key headers that carry the token taken out before anything is forwarded.
 */
import type { IncomingHttpHeaders } from 'node:http'
import { carriesToken, requireRowToken, requireToken, tokenKeyHeaders } from '../../../proxy/http/access'
import { HoldfastError } from '../../../proxy/core/errors'

const TOKEN = 'Zx1_-abcdefghijklmnopqrstuvwxyz0123456789AB'

describe('carriesToken', () => {
  it.each<[string, IncomingHttpHeaders]>([
    ['x-holdfast-token', { 'x-holdfast-token': TOKEN }],
    ['x-api-key', { 'x-api-key': TOKEN }],
    ['Authorization: Bearer', { authorization: `Bearer ${TOKEN}` }],
    ['a lowercase bearer scheme', { authorization: `bearer ${TOKEN}` }],
    ['a tab after the scheme', { authorization: `Bearer\t${TOKEN}` }],
    [
      'x-api-key beside a key of its own in Authorization',
      { 'x-api-key': TOKEN, authorization: 'Bearer sk-own' },
    ],
    [
      'a wrong x-holdfast-token beside the token as the key',
      { 'x-holdfast-token': 'nope', 'x-api-key': TOKEN },
    ],
  ])('finds the token in %s', (_, headers) => {
    expect(carriesToken(TOKEN, headers)).toBe(true)
  })

  it.each<[string, IncomingHttpHeaders]>([
    ['no header', {}],
    ['an empty x-holdfast-token', { 'x-holdfast-token': '' }],
    ['a prefix', { 'x-holdfast-token': TOKEN.slice(0, 20) }],
    ['one character more', { 'x-api-key': `${TOKEN}A` }],
    ['one character changed', { 'x-api-key': TOKEN.replace(/.$/, 'C') }],
    ['another case', { 'x-holdfast-token': TOKEN.toLowerCase() }],
    ['the Basic scheme', { authorization: `Basic ${TOKEN}` }],
    ['Bearer without a space', { authorization: `Bearer${TOKEN}` }],
    ['Bearer with more after it', { authorization: `Bearer ${TOKEN} ${TOKEN}` }],
    ['Authorization without a scheme', { authorization: TOKEN }],
    ['another header', { 'x-holdfast-agent': TOKEN, 'x-goog-api-key': TOKEN, cookie: `token=${TOKEN}` }],
  ])('does not take %s for the token', (_, headers) => {
    expect(carriesToken(TOKEN, headers)).toBe(false)
  })

  it('reads the first of repeated values, as the guard reads every header', () => {
    expect(carriesToken(TOKEN, { 'x-holdfast-token': [TOKEN, 'x'] as unknown as string })).toBe(true)
    expect(carriesToken(TOKEN, { 'x-holdfast-token': ['x', TOKEN] as unknown as string })).toBe(false)
  })
})

describe('the token as a key header', () => {
  it('names each key header that carries it, and only those', () => {
    const headers = { 'x-api-key': 'sk-own', authorization: `Bearer ${TOKEN}`, 'x-holdfast-token': TOKEN }
    expect(tokenKeyHeaders(TOKEN, headers)).toEqual(['authorization'])
    expect(tokenKeyHeaders(TOKEN, { 'x-api-key': TOKEN, authorization: `Bearer ${TOKEN}` })).toEqual([
      'x-api-key',
      'authorization',
    ])
    expect(tokenKeyHeaders(TOKEN, { 'x-api-key': 'sk-own', 'x-holdfast-token': TOKEN })).toEqual([])
  })
})

describe('the refusals', () => {
  const refusal = (fn: () => void): HoldfastError => {
    try {
      fn()
    } catch (err) {
      return err as HoldfastError
    }
    throw new Error('not refused')
  }

  it('refuses without the token with TOKEN_REQUIRED, saying where it is kept and where it goes', () => {
    const byFile = refusal(() => requireToken({ token: TOKEN, strict: false }, {}, 'the admin surface'))
    expect([byFile.code, byFile.status]).toEqual(['TOKEN_REQUIRED', 401])
    expect(byFile.message).toBe(
      "the admin surface requires holdfast's token (<home>/token): send it in x-holdfast-token, or as the client's API key (ANTHROPIC_API_KEY or OPENAI_API_KEY, an SDK's apiKey, Authorization: Bearer); `holdfast env` exports it",
    )
    const configured = refusal(() => requireToken({ token: TOKEN, strict: true }, {}, 'this holdfast'))
    expect(configured.message).toMatch(
      /^this holdfast requires the token configured in holdfast.yaml or HOLDFAST_TOKEN: /,
    )
    expect(() => requireToken({ token: TOKEN, strict: false }, { 'x-api-key': TOKEN }, 'x')).not.toThrow()
  })

  it("refuses a row that adds the operator's key without the token with ROW_TOKEN_REQUIRED naming the row and its variable", () => {
    const e = refusal(() => requireRowToken(false, 'anthropic', { api_key_env: 'TEAM_KEY' }))
    expect([e.code, e.status]).toEqual(['ROW_TOKEN_REQUIRED', 403])
    expect(e.message).toMatch(
      /^provider row "anthropic" adds the operator's key \(\$TEAM_KEY\), so it serves only/,
    )
    expect(() => requireRowToken(true, 'anthropic', { api_key_env: 'TEAM_KEY' })).not.toThrow()
    expect(() => requireRowToken(false, 'plain', {})).not.toThrow()
  })
})
