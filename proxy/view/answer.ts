/**
 * The view's own answers: a page in the frame with its security headers (a strict content policy,
 * no framing, a referrer policy that keeps the Origin of its forms), and a page that only says a
 * refusal, with the status of its code in the error table. Invariant: every HTML answer of the
 * view carries these headers.
 */
import type http from 'node:http'
import { ERROR_CODES, type HoldfastError } from '../core/errors'
import { type Html, markup } from './html'
import { type Crumb, serverPage } from './layout'
import { serverLinks as links } from './links'

export const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
}

/** Send a body with the page headers (and these). */
export function send(
  res: http.ServerResponse,
  status: number,
  body: string | Buffer,
  headers: Record<string, string> = {},
): void {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body
  res.writeHead(status, { ...PAGE_HEADERS, ...headers, 'content-length': String(bytes.length) })
  res.end(bytes)
}

const signInHelp = markup`<p>
  Run <code>holdfast open</code> in a terminal: it opens this view with a one-time link that signs this
  browser in (an HttpOnly cookie tied to the home's token). Programs may send <code>x-holdfast-token</code>.
</p>`

/** A page that only says something (a refusal, a sign-in, a missing record), with its code's status. */
export function messagePage(res: http.ServerResponse, err: HoldfastError): void {
  const body = markup`<h1>${err.code === 'VIEW_SIGN_IN' ? 'Sign in to the view' : 'Not shown'}</h1>
    <p>${err.message}</p>
    ${err.code === 'VIEW_SIGN_IN' ? signInHelp : ''}`
  send(res, ERROR_CODES[err.code].status, serverPage({ title: err.code, trail: [], links, body }), {
    'x-holdfast-error': err.code,
  })
}

/** A page in the frame. */
export function pageOf(
  res: http.ServerResponse,
  title: string,
  trail: Crumb[],
  body: Html,
  live?: string,
  status = 200,
): void {
  send(res, status, serverPage({ title, trail, links, body, ...(live ? { live } : {}) }))
}
