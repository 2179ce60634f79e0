/**
 * Who may see the view and post its forms (DESIGN §4 View): the admin surface's rules for a
 * browser, done the way Jupyter does it. `holdfast open` prints a URL with a one-time ticket (made
 * from the home's token, valid two minutes, used once); the server trades it for an HttpOnly,
 * SameSite=Strict cookie whose value is derived from the token (never the token itself). A program
 * may send `x-holdfast-token` instead. A form carries an anti-forgery value bound to its action
 * and is accepted only from the page's own origin. Pure but for the used-ticket memory.
 * Invariant: nothing here answers without a valid ticket, cookie or token; a secret is compared in
 * constant time.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'

export const TICKET_TTL_MS = 120_000
export const FORM_TTL_MS = 24 * 3600_000

const mac = (secret: string, what: string): string =>
  createHmac('sha256', secret).update(what).digest('base64url').slice(0, 32)

function same(a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

const header = (h: IncomingHttpHeaders, name: string): string | undefined => {
  const v = h[name]
  return Array.isArray(v) ? v[0] : v
}

/** A one-time ticket for a URL (`holdfast open`): `<expiry>.<nonce>.<mac>`. */
export function makeTicket(secret: string, now = Date.now()): string {
  const exp = (now + TICKET_TTL_MS).toString(36)
  const nonce = randomBytes(12).toString('base64url')
  return `${exp}.${nonce}.${mac(secret, `ticket:${exp}:${nonce}`)}`
}

/** Tickets already traded, until they expire: a ticket works once. */
export class UsedTickets {
  private readonly used = new Map<string, number>()
  /** True when the ticket is genuine, unexpired and unused (it is then used). */
  take(secret: string, ticket: string, now = Date.now()): boolean {
    const [exp, nonce, m, extra] = ticket.split('.')
    if (!exp || !nonce || !m || extra !== undefined) return false
    const expiry = parseInt(exp, 36)
    if (!Number.isFinite(expiry) || expiry < now || expiry > now + TICKET_TTL_MS) return false
    if (!same(m, mac(secret, `ticket:${exp}:${nonce}`))) return false
    for (const [k, e] of this.used) if (e < now) this.used.delete(k)
    if (this.used.has(nonce)) return false
    this.used.set(nonce, expiry)
    return true
  }
}

/** The cookie's name: per port, since browsers share cookies between ports of one host. */
export const cookieName = (port: number | string): string => `holdfast_view_${port}`

/** The cookie's value: derived from the token, so it is revoked with the token and reveals nothing of it. */
export const sessionValue = (secret: string): string => mac(secret, 'view-session')

/** The Set-Cookie header that signs a browser in. */
export function sessionCookie(secret: string, port: number | string): string {
  return `${cookieName(port)}=${sessionValue(secret)}; Path=/; HttpOnly; SameSite=Strict; Max-Age=2592000`
}

/** The value of one cookie in a Cookie header. */
export function cookieOf(headers: IncomingHttpHeaders, name: string): string | undefined {
  for (const part of (header(headers, 'cookie') ?? '').split(';')) {
    const i = part.indexOf('=')
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim()
  }
  return undefined
}

/** Whether a request is signed in: the session cookie, or the token in `x-holdfast-token`. */
export function signedIn(secret: string, port: number | string, headers: IncomingHttpHeaders): boolean {
  const token = header(headers, 'x-holdfast-token')
  if (token !== undefined) return same(token, secret)
  const cookie = cookieOf(headers, cookieName(port))
  return cookie !== undefined && same(cookie, sessionValue(secret))
}

/** A form's anti-forgery value, bound to the path it posts to. */
export function formValue(secret: string, action: string, now = Date.now()): string {
  const issued = now.toString(36)
  const nonce = randomBytes(9).toString('base64url')
  return `${issued}.${nonce}.${mac(secret, `form:${issued}:${nonce}:${action}`)}`
}

/** Whether a posted anti-forgery value is genuine, for this action, and not older than a day. */
export function formValueOk(secret: string, action: string, value: string, now = Date.now()): boolean {
  const [issued, nonce, m, extra] = value.split('.')
  if (!issued || !nonce || !m || extra !== undefined) return false
  const t = parseInt(issued, 36)
  if (!Number.isFinite(t) || t > now + 60_000 || now - t > FORM_TTL_MS) return false
  return same(m, mac(secret, `form:${issued}:${nonce}:${action}`))
}

/** The origin a page of this server has, from the request's Host (already checked to be allowed). */
export const ownOrigin = (headers: IncomingHttpHeaders): string => `http://${header(headers, 'host') ?? ''}`

/**
 * Why a request may not reach the view from where it comes, if it may not: another origin's
 * `Origin` header (a script's fetch, a form), or a browser saying a non-navigation request crosses
 * sites. A POST must show it comes from the page's own origin.
 */
export function crossOrigin(method: string, headers: IncomingHttpHeaders): string | undefined {
  const origin = header(headers, 'origin')
  const site = header(headers, 'sec-fetch-site')
  const mode = header(headers, 'sec-fetch-mode')
  if (origin !== undefined && origin !== ownOrigin(headers)) return `requests from ${origin} are refused`
  if (method === 'POST') {
    if (origin === undefined && site !== 'same-origin')
      return 'a form must be posted from the view itself (no Origin header)'
    return undefined
  }
  if (site !== undefined && site !== 'same-origin' && site !== 'none' && mode !== 'navigate')
    return `a ${site} ${mode ?? ''} request is refused`.replace('  ', ' ')
  return undefined
}
