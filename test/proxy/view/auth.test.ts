/**
 * view/auth: a ticket signs in once and expires; the cookie is derived from the token (never the
 * token) and revoked with it; a form value is bound to its action and ages; a request from another
 * origin is refused, a navigation is not.
 */
import {
  cookieName,
  crossOrigin,
  formValue,
  formValueOk,
  makeTicket,
  sessionCookie,
  sessionValue,
  signedIn,
  TICKET_TTL_MS,
  UsedTickets,
} from '../../../proxy/view/auth'

const SECRET = 'secret-token-value'

describe('tickets', () => {
  it('work once, only with the secret they were made with, and only for two minutes', () => {
    const used = new UsedTickets()
    const t = makeTicket(SECRET, 1000)
    expect(used.take('other', t, 1000)).toBe(false)
    expect(used.take(SECRET, t, 1000)).toBe(true)
    expect(used.take(SECRET, t, 1000)).toBe(false)
    expect(new UsedTickets().take(SECRET, makeTicket(SECRET, 1000), 1000 + TICKET_TTL_MS + 1)).toBe(false)
    expect(used.take(SECRET, 'a.b.c', 1000)).toBe(false)
    expect(
      used.take(
        SECRET,
        t.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')),
        1000,
      ),
    ).toBe(false)
  })
})

describe('the session cookie', () => {
  it('is HttpOnly and SameSite=Strict, named per port, and holds no part of the token', () => {
    const c = sessionCookie(SECRET, 8787)
    expect(c).toMatch(/^holdfast_view_8787=[\w-]+; Path=\/; HttpOnly; SameSite=Strict/)
    expect(c).not.toContain(SECRET)
    expect(sessionValue('another token')).not.toBe(sessionValue(SECRET))
  })

  it('signs a request in, as does the token in x-holdfast-token; a cookie of another token does not', () => {
    const cookie = `a=b; ${cookieName(8787)}=${sessionValue(SECRET)}`
    expect(signedIn(SECRET, 8787, { cookie })).toBe(true)
    expect(signedIn(SECRET, 9999, { cookie })).toBe(false)
    expect(signedIn('rotated', 8787, { cookie })).toBe(false)
    expect(signedIn(SECRET, 8787, { 'x-holdfast-token': SECRET })).toBe(true)
    expect(signedIn(SECRET, 8787, { 'x-holdfast-token': 'wrong', cookie })).toBe(false)
    expect(signedIn(SECRET, 8787, {})).toBe(false)
  })
})

describe('form values', () => {
  it('are accepted for their own action, from the same secret, for a day', () => {
    const v = formValue(SECRET, '/ui/w/w/a/m/s/001/fork', 0)
    expect(formValueOk(SECRET, '/ui/w/w/a/m/s/001/fork', v, 1000)).toBe(true)
    expect(formValueOk(SECRET, '/ui/w/w/a/m/s/002/fork', v, 1000)).toBe(false)
    expect(formValueOk('other', '/ui/w/w/a/m/s/001/fork', v, 1000)).toBe(false)
    expect(formValueOk(SECRET, '/ui/w/w/a/m/s/001/fork', v, 25 * 3600_000)).toBe(false)
    expect(formValueOk(SECRET, '/ui/w/w/a/m/s/001/fork', 'forged', 1000)).toBe(false)
  })
})

describe('origins', () => {
  const host = { host: '127.0.0.1:8787' }
  it('refuses a request whose Origin is another page’s, and a cross-site subresource', () => {
    expect(crossOrigin('GET', { ...host, origin: 'http://127.0.0.1:9999' })).toMatch(
      /127.0.0.1:9999 are refused/,
    )
    expect(
      crossOrigin('GET', { ...host, 'sec-fetch-site': 'same-site', 'sec-fetch-mode': 'cors' }),
    ).toBeDefined()
    expect(crossOrigin('POST', { ...host, origin: 'null' })).toBeDefined()
  })

  it('lets the view’s own requests and a navigation from elsewhere through; a POST must show its origin', () => {
    expect(
      crossOrigin('GET', { ...host, 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate' }),
    ).toBeUndefined()
    expect(crossOrigin('GET', host)).toBeUndefined()
    expect(crossOrigin('POST', { ...host, origin: 'http://127.0.0.1:8787' })).toBeUndefined()
    expect(crossOrigin('POST', { ...host, 'sec-fetch-site': 'same-origin' })).toBeUndefined()
    expect(crossOrigin('POST', host)).toMatch(/no Origin header/)
  })
})
