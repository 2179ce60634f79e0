/**
 * The view's pages, streams and form, once a request is signed in (index.ts): each route read
 * through the shared reports and rendered by its page module; a live page's stream; Fork from
 * here's post. Invariant: a page reads what the CLI reads; a post fires nothing unless its
 * anti-forgery value is genuine and it names a role and a goal.
 */
import type http from 'node:http'
import { HoldfastError } from '../core/errors'
import type { ServerContext } from '../live/context'
import { existingAgent, existingWorkspace } from '../report/lookup'
import { directFiles } from '../report/step-files'
import type { Workspace } from '../store/workspace'
import { PAGE_HEADERS, pageOf, send } from './answer'
import { formValue, formValueOk } from './auth'
import { fireFork, forkForm, forkOptions } from './fork'
import { readForm } from './form'
import { type Html, markup } from './html'
import { serverLinks as links } from './links'
import { liveStream } from './live'
import { agentBody, agentSummary, barMax, timelineRowsHtml } from './pages/agent'
import { cohortBody, cohortMembers } from './pages/cohort'
import { stepBody } from './pages/step'
import { treeRows, workspaceBody, workspaceCards } from './pages/workspace'
import { workspacesBody } from './pages/workspaces'
import { workspaceData } from '../report/agent-tree'
import { workspaceRows } from '../report/agents'
import { cohortData } from '../report/cohort'
import { stepData } from '../report/step-data'
import { agentData, type TimelineRow, timelineRows } from '../report/timeline'
import type { Route } from './routes'
import { statusFor, statusText } from '../report/statusline'

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
      const bytes = await directFiles(ws, route.agent).file(route.n, route.file)
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
  const id = Math.random().toString(36).slice(2, 10)
  firedNotes.set(id, notes)
  if (firedNotes.size > 100) firedNotes.delete(firedNotes.keys().next().value as string)
  res.writeHead(303, {
    location: `${links.cohort(ws.name, route.agent, route.n)}?fired=${id}`,
    'cache-control': 'no-store',
  })
  res.end()
}
