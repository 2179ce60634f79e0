/**
 * The web view (DESIGN §4 View, §11): `GET /` (HTML) and `/ui/…`, served by `holdfast serve` under
 * the admin surface's rules — loopback Host (the guard), no CORS headers, nothing another origin
 * can read or post — with the sign-in of auth.ts. Pages render on the server (they work with
 * scripts off); live pages stream their changes (live.ts). Invariant: every page but the assets
 * answers only a signed-in request; a refused request changes nothing.
 */
import type http from 'node:http'
import { HoldfastError } from '../core/errors'
import type { ServerContext } from '../context'
import { NotFound } from '../report/lookup'
import { readStepFile } from '../record/read'
import { existingAgent, existingWorkspace } from '../report/lookup'
import { configuredToken } from '../store/config'
import { ensureTokenFile } from '../store/token'
import { asHoldfastError } from '../respond'
import { ASSETS } from './assets'
import { crossOrigin, formValue, formValueOk, sessionCookie, signedIn, UsedTickets } from './auth'
import { type Html, markup } from './html'
import { serverPage } from './layout'
import { serverLinks as links } from './links'
import { liveStream } from './live'
import {
  agentBody,
  agentData,
  agentSummary,
  barMax,
  timelineRows,
  timelineRowsHtml,
  type TimelineRow,
} from './pages/agent'
import { cohortBody, cohortData, cohortMembers } from './pages/cohort'
import { stepBody, stepData } from './pages/step'
import { treeRows, workspaceBody, workspaceCards, workspaceData } from './pages/workspace'
import { workspaceRows, workspacesBody } from './pages/workspaces'
import { fireFork, forkForm, forkOptions } from './fork'
import { type Route, routeOf } from './routes'
import { statusFor, statusText } from './statusline'
import { readForm } from './form'

const PAGE_HEADERS = {
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

function send(
  res: http.ServerResponse,
  status: number,
  body: string,
  headers: Record<string, string> = {},
): void {
  const bytes = Buffer.from(body)
  res.writeHead(status, { ...PAGE_HEADERS, ...headers, 'content-length': String(bytes.length) })
  res.end(bytes)
}

/** A page that only says something (a refusal, a sign-in, a missing record). */
function messagePage(res: http.ServerResponse, err: HoldfastError, extra: Html = markup``): void {
  const status = {
    VIEW_SIGN_IN: 401,
    VIEW_REFUSED: 403,
    NOT_FOUND: 404,
    BAD_NAME: 400,
    VIEW_FORM_INVALID: 400,
  }[err.code as string]
  const body = markup`<h1>${err.code === 'VIEW_SIGN_IN' ? 'Sign in to the view' : 'Not shown'}</h1>
    <p>${err.message}</p>
    ${extra}`
  send(res, status ?? 500, serverPage({ title: err.code, trail: [], links, body }), {
    'x-holdfast-error': err.code,
  })
}

const signInHelp = markup`<p>
  Run <code>holdfast open</code> in a terminal: it opens this view with a one-time link that signs this
  browser in (an HttpOnly cookie tied to the home's token). Programs may send <code>x-holdfast-token</code>.
</p>`

function pageOf(
  res: http.ServerResponse,
  title: string,
  trail: { label: string; href?: string }[],
  body: Html,
  live?: string,
  status = 200,
): void {
  send(res, status, serverPage({ title, trail, links, body, ...(live ? { live } : {}) }))
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
    messagePage(res, e, e.code === 'VIEW_SIGN_IN' ? signInHelp : markup``)
  }
}

async function get(
  ctx: ServerContext,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  route: Route,
  secret: string,
  url: URL,
  refused?: { notice: Html; status: number },
): Promise<void> {
  switch (route.page) {
    case 'home':
      return pageOf(res, 'workspaces', [], workspacesBody(await workspaceRows(ctx.home), links))
    case 'statusline': {
      const s = await statusFor(ctx, url.searchParams.get('session') ?? '')
      send(res, 200, JSON.stringify(s ? { ...s, line: statusText(s) } : { line: null }) + '\n', {
        'content-type': 'application/json',
      })
      return
    }
    case 'workspace': {
      const ws = await existingWorkspace(ctx.home, route.ws)
      if (route.live)
        return liveStream(
          ctx.home,
          req,
          res,
          (e) => e.ws === ws.name,
          async () => {
            const d = await workspaceData(ws)
            return { replace: { 'ws-tree': treeRows(d, links).text, 'ws-cards': workspaceCards(d).text } }
          },
          (err) => ctx.log.warn({ err: String(err) }, 'view: a live update failed'),
        )
      const d = await workspaceData(ws)
      return pageOf(
        res,
        ws.name,
        [{ label: ws.name }],
        workspaceBody(d, links),
        `${links.workspace(ws.name)}/live`,
      )
    }
    case 'agent': {
      const ws = await existingWorkspace(ctx.home, route.ws)
      await existingAgent(ws, route.agent)
      if (route.live)
        return agentStream(ctx, req, res, ws, route.agent, Number(url.searchParams.get('after') ?? 0))
      const d = await agentData(ws, route.agent)
      const committed = Math.max(0, ...d.rows.filter((r) => r.state === 'committed').map((r) => r.n))
      return pageOf(
        res,
        `${route.agent} · ${ws.name}`,
        [{ label: ws.name, href: links.workspace(ws.name) }, { label: route.agent }],
        agentBody(d, links),
        `${links.agent(ws.name, route.agent)}/live?after=${committed}&max=${barMax(d.rows)}`,
      )
    }
    case 'step': {
      const ws = await existingWorkspace(ctx.home, route.ws)
      await existingAgent(ws, route.agent)
      const d = await stepData(ws, route.agent, route.n)
      const action = `${links.step(ws.name, route.agent, route.n)}/fork`
      const fork = forkForm(
        await forkOptions(ws, ctx.config, route.agent, route.n, ctx.configReader(ws.name)),
        action,
        formValue(secret, action),
      )
      return pageOf(
        res,
        `${route.agent} ${d.why.step} · ${ws.name}`,
        [
          { label: ws.name, href: links.workspace(ws.name) },
          { label: route.agent, href: links.agent(ws.name, route.agent) },
          { label: d.why.step },
        ],
        markup`${refused?.notice ?? ''}${stepBody(d, links, fork)}`,
        undefined,
        refused?.status,
      )
    }
    case 'raw': {
      const ws = await existingWorkspace(ctx.home, route.ws)
      await existingAgent(ws, route.agent)
      const bytes = await readStepFile(ws, route.agent, route.n, route.file)
      if (!bytes)
        throw new HoldfastError('NOT_FOUND', `step ${route.n} of ${route.agent} has no ${route.file}`)
      res.writeHead(200, {
        ...PAGE_HEADERS,
        'content-type': route.file.endsWith('.json') ? 'application/json' : 'text/plain; charset=utf-8',
        'content-length': bytes.length,
      })
      res.end(bytes)
      return
    }
    case 'cohort': {
      const ws = await existingWorkspace(ctx.home, route.ws)
      if (route.live)
        return liveStream(
          ctx.home,
          req,
          res,
          (e) => e.ws === ws.name,
          async () => {
            const d = await cohortData(ws, route.agent, route.n)
            return { replace: { 'cohort-members': cohortMembers(d, links).text } }
          },
          (err) => ctx.log.warn({ err: String(err) }, 'view: a live update failed'),
        )
      const d = await cohortData(ws, route.agent, route.n)
      const fired = url.searchParams.get('fired')
      const refusals = fired ? firedNotes.get(fired) : undefined
      return pageOf(
        res,
        `cohort ${route.agent}@${d.n}`,
        [
          { label: ws.name, href: links.workspace(ws.name) },
          { label: route.agent, href: links.agent(ws.name, route.agent) },
          { label: `cohort @${String(route.n).padStart(3, '0')}` },
        ],
        cohortBody(
          d,
          links,
          refusals?.length
            ? markup`<div class="notice">${refusals.map((r) => markup`<p>${r}</p>`)}</div>`
            : undefined,
        ),
        `${links.cohort(ws.name, route.agent, route.n)}/live`,
      )
    }
    default:
      throw new HoldfastError('NOT_FOUND', `no such page: ${url.pathname}`)
  }
}

/** Refusals of recent Fork from here posts, shown once on the cohort page they lead to. */
const firedNotes = new Map<string, string[]>()

function agentStream(
  ctx: ServerContext,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  ws: Parameters<typeof timelineRows>[0],
  agent: string,
  after: number,
): void {
  let committedAfter = after
  let rows: TimelineRow[] | undefined
  let max = 1
  liveStream(
    ctx.home,
    req,
    res,
    (e) => e.ws === ws.name && e.agent === agent,
    async () => {
      const all = await timelineRows(ws, agent)
      const fresh = all.filter((r) => r.n > committedAfter)
      if (rows && fresh.length === 0) return undefined
      max = Math.max(max, barMax(all))
      rows = all
      committedAfter = Math.max(committedAfter, ...all.filter((r) => r.state === 'committed').map((r) => r.n))
      const d = { ws: ws.name, agent, rows: all, tools: [] }
      return {
        upsert: { 'agent-steps': timelineRowsHtml(d, fresh, max, links).text },
        replace: { 'agent-summary': agentSummary(d).text },
        after: committedAfter,
      }
    },
    (err) => ctx.log.warn({ err: String(err) }, 'view: a live update failed'),
  )
}

async function postFork(
  ctx: ServerContext,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  route: Extract<Route, { page: 'fork' }>,
  secret: string,
  action: string,
): Promise<void> {
  const form = await readForm(req)
  if (!formValueOk(secret, action, form.get('form') ?? ''))
    throw new HoldfastError(
      'VIEW_REFUSED',
      'the form carried no valid anti-forgery value: reload the step page and post again',
    )
  const ws = await existingWorkspace(ctx.home, route.ws)
  await existingAgent(ws, route.agent)
  const roles = form.getAll('role')
  const goal = form.get('goal') ?? ''
  if (roles.length === 0 || goal.trim() === '') {
    const e = new HoldfastError(
      'VIEW_FORM_INVALID',
      roles.length === 0
        ? 'check at least one role to fire an attempt'
        : 'say what the attempts are for (the goal)',
    )
    const stepUrl = new URL(`http://view.invalid${links.step(ws.name, route.agent, route.n)}`)
    return get(
      ctx,
      req,
      res,
      { page: 'step', ws: ws.name, agent: route.agent, n: route.n },
      secret,
      stepUrl,
      {
        notice: markup`<div class="notice bad" data-error="${e.code}">${e.message}; nothing was fired.</div>`,
        status: 400,
      },
    )
  }
  const fired = await fireFork(ctx.home, ctx.config, {
    ws: ws.name,
    agent: route.agent,
    n: route.n,
    roles,
    goal,
    skills: form.getAll('skill'),
  })
  void ctx.track(Promise.resolve(fired.done), 'admin')
  const notes = [...fired.outcomes]
    .filter(([, o]) => o.refused)
    .map(([role, o]) => `${role}: refused: ${o.refused}`)
  const id = Math.random().toString(36).slice(2, 10)
  firedNotes.set(id, notes)
  if (firedNotes.size > 100) firedNotes.delete(firedNotes.keys().next().value as string)
  res.writeHead(303, {
    location: `${links.cohort(ws.name, route.agent, route.n)}?fired=${id}`,
    'cache-control': 'no-store',
  })
  res.end()
}
