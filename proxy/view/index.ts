/**
 * The web view (DESIGN §4 View, §11): `GET /` (HTML) and `/ui/…`, served by `holdfast serve` under
 * the admin surface's rules — loopback Host (the guard), no CORS headers, nothing another origin
 * can read or post — with the sign-in of auth.ts. Pages render on the server (they work with
 * scripts off); live pages stream their changes (live.ts). Invariant: every page but the assets
 * answers only a signed-in request; a refused request changes nothing.
 */
import type http from 'node:http'
import { HoldfastError } from '../core/errors'
import type { ServerContext } from '../live/context'
import { NotFound } from '../report/lookup'
import { configuredToken } from '../store/config'
import { ensureTokenFile } from '../store/token'
import { asHoldfastError } from '../http/respond'
import { messagePage } from './answer'
import { ASSETS } from './assets'
import { crossOrigin, sessionCookie, signedIn, UsedTickets } from './auth'
import { get, postFork } from './handlers'
import { routeOf } from './routes'

const tickets = new WeakMap<ServerContext, UsedTickets>()
const fileTokens = new Map<string, string>()

/** The view's secret: the configured token, else the home's token file (made when missing). */
export function viewSecret(ctx: ServerContext): string {
  const configured = configuredToken(ctx.config)
  if (configured) return configured
  let t = fileTokens.get(ctx.home)
  if (!t) fileTokens.set(ctx.home, (t = ensureTokenFile(ctx.home)))
  return t
}

export async function handleView(
  ctx: ServerContext,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<void> {
  const method = req.method ?? 'GET'
  const url = new URL(req.url ?? '/', 'http://view.invalid')
  try {
    const route = routeOf(url.pathname)
    if (!route) throw new HoldfastError('NOT_FOUND', `no such page: ${url.pathname}`)
    if (route.page === 'asset') {
      const a = ASSETS.get(route.name)
      if (!a) throw new HoldfastError('NOT_FOUND', `no such asset: ${route.name}`)
      res.writeHead(200, {
        'content-type': a.type,
        'content-length': a.body.length,
        'cache-control': 'public, max-age=31536000, immutable',
        'x-content-type-options': 'nosniff',
        'cross-origin-resource-policy': 'same-origin',
      })
      res.end(a.body)
      return
    }
    const refused = crossOrigin(method, req.headers)
    if (refused) throw new HoldfastError('VIEW_REFUSED', refused)
    const secret = viewSecret(ctx)
    const port = req.socket.localPort ?? 0
    const ticket = url.searchParams.get('ticket')
    if (ticket !== null && method === 'GET') {
      let used = tickets.get(ctx)
      if (!used) tickets.set(ctx, (used = new UsedTickets()))
      if (!used.take(secret, ticket))
        throw new HoldfastError('VIEW_SIGN_IN', 'this sign-in link has expired or was used already')
      url.searchParams.delete('ticket')
      res.writeHead(303, {
        location: url.pathname + url.search,
        'set-cookie': sessionCookie(secret, port),
        'cache-control': 'no-store',
        'referrer-policy': 'same-origin',
      })
      res.end()
      return
    }
    if (route.page === 'root') {
      res.writeHead(303, { location: '/ui/', 'cache-control': 'no-store' })
      res.end()
      return
    }
    if (!signedIn(secret, port, req.headers))
      throw new HoldfastError('VIEW_SIGN_IN', 'this browser is not signed in to the holdfast view')
    if (method === 'POST') {
      if (route.page !== 'fork') throw new HoldfastError('NOT_FOUND', `no form posts to ${url.pathname}`)
      await postFork(ctx, req, res, route, secret, url.pathname)
      return
    }
    if (method !== 'GET' && method !== 'HEAD')
      throw new HoldfastError('NOT_FOUND', `no such page: ${method} ${url.pathname}`)
    await get(ctx, req, res, route, secret, url)
  } catch (err) {
    if (res.headersSent) {
      ctx.log.warn({ err: String(err), url: url.pathname }, 'view: a page failed after it began')
      res.destroy()
      return
    }
    const e = err instanceof NotFound ? new HoldfastError('NOT_FOUND', err.message) : asHoldfastError(err)
    if (e.code === 'INTERNAL') ctx.log.error({ err: String(err), url: url.pathname }, 'view: a page failed')
    messagePage(res, e)
  }
}
