/**
 * The view's answers once a request is signed in (index.ts). Every page of the page table
 * (table.ts: home, workspace, agent, step, cohort) is served one way — its loader, then its title,
 * trail and body in the frame, with its live stream's address. The routes that are no page row
 * stay here, each as it is: the status line's JSON (`/ui/api/statusline`), a step's raw file as
 * recorded (`…/raw/<file>`), a live page's event stream (`…/live`: the regions each commit
 * re-renders) and Fork from here's post (`…/fork`); the root's redirect, the assets and the sign-in
 * stay in index.ts. Invariant: a page reads what the CLI reads; a post fires nothing unless its
 * anti-forgery value is genuine and it names a role and a goal.
 */
import type http from 'node:http'
import { HoldfastError } from '../core/errors'
import type { ServerContext } from '../live/context'
import { workspaceData } from '../report/agent-tree'
import { cohortData } from '../report/cohort'
import { existingAgent, existingWorkspace } from '../report/lookup'
import { directFiles } from '../report/step-files'
import { statusFor, statusText } from '../report/statusline'
import { type TimelineRow, timelineRows } from '../report/timeline'
import type { Workspace } from '../store/workspace'
import { PAGE_HEADERS, pageOf, send } from './answer'
import { formValueOk } from './auth'
import { fireFork, noteFired } from './fork'
import { readForm } from './form'
import { type Html, markup } from './html'
import { serverLinks as links } from './links'
import { liveStream } from './live'
import { agentSummary, barMax, timelineRowsHtml } from './pages/agent'
import { cohortMembers } from './pages/cohort'
import { treeRows, workspaceCards } from './pages/workspace'
import type { Route } from './routes'
import { renderPage } from './table'

/** A live page's event stream: the commits `wants` picks re-render its regions; a failed update is logged. */
function live(
  ctx: ServerContext,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  wants: Parameters<typeof liveStream>[3],
  render: Parameters<typeof liveStream>[4],
): void {
  liveStream(ctx.home, req, res, wants, render, (err) =>
    ctx.log.warn({ err: String(err) }, 'view: a live update failed'),
  )
}

export async function get(
  ctx: ServerContext,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  route: Route,
  secret: string,
  url: URL,
  refused?: { notice: Html; status: number },
): Promise<void> {
  if (route.page === 'statusline') {
    const s = await statusFor(ctx, url.searchParams.get('session') ?? '')
    send(res, 200, JSON.stringify(s ? { ...s, line: statusText(s) } : { line: null }) + '\n', {
      'content-type': 'application/json',
    })
    return
  }
  if (route.page === 'raw') return rawFile(ctx, res, route)
  if ('live' in route && route.live) return stream(ctx, req, res, route, url)
  const page = await renderPage(route, { server: ctx, secret, url }, links)
  if (!page) throw new HoldfastError('NOT_FOUND', `no such page: ${url.pathname}`)
  const body = refused ? markup`${refused.notice}${page.body}` : page.body
  pageOf(res, page.title, page.trail, body, page.live, refused?.status)
}

/** A step's file, the bytes as recorded. */
async function rawFile(
  ctx: ServerContext,
  res: http.ServerResponse,
  route: Extract<Route, { page: 'raw' }>,
): Promise<void> {
  const ws = await existingWorkspace(ctx.home, route.ws)
  await existingAgent(ws, route.agent)
  const bytes = await directFiles(ws, route.agent).file(route.n, route.file)
  if (!bytes) throw new HoldfastError('NOT_FOUND', `step ${route.n} of ${route.agent} has no ${route.file}`)
  res.writeHead(200, {
    ...PAGE_HEADERS,
    'content-type': route.file.endsWith('.json') ? 'application/json' : 'text/plain; charset=utf-8',
    'content-length': bytes.length,
  })
  res.end(bytes)
}

/** A live page's stream: the regions of its page that a commit changes. */
async function stream(
  ctx: ServerContext,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  route: Extract<Route, { live: boolean }>,
  url: URL,
): Promise<void> {
  const ws = await existingWorkspace(ctx.home, route.ws)
  switch (route.page) {
    case 'workspace':
      return live(
        ctx,
        req,
        res,
        (e) => e.ws === ws.name,
        async () => {
          const d = await workspaceData(ws)
          return { replace: { 'ws-tree': treeRows(d, links).text, 'ws-cards': workspaceCards(d).text } }
        },
      )
    case 'agent':
      await existingAgent(ws, route.agent)
      return agentStream(ctx, req, res, ws, route.agent, Number(url.searchParams.get('after') ?? 0))
    case 'cohort':
      return live(
        ctx,
        req,
        res,
        (e) => e.ws === ws.name,
        async () => {
          const d = await cohortData(ws, route.agent, route.n)
          return { replace: { 'cohort-members': cohortMembers(d, links).text } }
        },
      )
  }
}

function agentStream(
  ctx: ServerContext,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  ws: Workspace,
  agent: string,
  after: number,
): void {
  let committedAfter = after
  let rows: TimelineRow[] | undefined
  let max = 1
  live(
    ctx,
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
  )
}

export async function postFork(
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
  const id = noteFired(notes)
  res.writeHead(303, {
    location: `${links.cohort(ws.name, route.agent, route.n)}?fired=${id}`,
    'cache-control': 'no-store',
  })
  res.end()
}
