/**
 * The view's pages as one table: each row a route of the route list (routes.ts: its `pattern`, so
 * its links and its parsing are the same pattern), the loader of its data (`data`, reading through
 * report/), its title, its breadcrumb trail (`crumbs`) and its body (`body`, a pure renderer of
 * pages/*.ts), and for a live page the address of its `/live` event stream (`live`). handlers.ts
 * serves every row one way; export.ts renders its sections with the same bodies and trails.
 * Invariant: a row's loader checks that the workspace (and the agent) it names exist before it
 * reads under them; `body` and `crumbs` read nothing.
 */
import { formatStep } from '../core/naming'
import type { ServerContext } from '../live/context'
import { workspaceData, type WorkspaceData } from '../report/agent-tree'
import { workspaceRows, type WorkspaceRow } from '../report/agents'
import { cohortData, type CohortData } from '../report/cohort'
import { existingAgent, existingWorkspace } from '../report/lookup'
import { stepData, type StepData } from '../report/step-data'
import { agentData, type AgentData } from '../report/timeline'
import { formValue } from './auth'
import { firedRefusals, forkForm, forkOptions } from './fork'
import { type Html, markup } from './html'
import type { Crumb } from './layout'
import type { Links } from './links'
import { agentBody, barMax } from './pages/agent'
import { cohortBody } from './pages/cohort'
import { stepBody } from './pages/step'
import { workspaceBody } from './pages/workspace'
import { workspacesBody } from './pages/workspaces'
import { LIVE, type Params, pathOf, type Route, type RouteName, ROUTES } from './routes'

/** What a loader may use: the server's context, the view's secret (for a form's value), the request's URL. */
export interface PageContext {
  server: ServerContext
  secret: string
  url: URL
}

export interface PageRow<K extends RouteName, D> {
  name: K
  pattern: (typeof ROUTES)[K]['pattern']
  data(ctx: PageContext, params: Params<K>): Promise<D>
  title(d: D): string
  crumbs(d: D, links: Links): Crumb[]
  body(d: D, links: Links): Html
  /** The address of the page's `/live` stream; present exactly when its route is live. */
  live?(d: D, links: Links): string
}

const row = <K extends RouteName, D>(r: PageRow<K, D>): PageRow<K, D> => r

/** The step page's data: the step's, and (on a server) what its Fork from here form offers. */
export type StepPage = StepData & {
  fork?: { options: Awaited<ReturnType<typeof forkOptions>>; action: string; value: string }
}
/** The cohort page's data: the cohort's, and the refusals of the post that just fired it. */
export type CohortPage = CohortData & { refusals?: string[] }

const wsCrumb = (ws: string, links: Links): Crumb => ({ label: ws, href: links.workspace(ws) })

export const PAGES = {
  home: row<'home', WorkspaceRow[]>({
    name: 'home',
    pattern: ROUTES.home.pattern,
    data: (ctx) => workspaceRows(ctx.server.home),
    title: () => 'workspaces',
    crumbs: () => [],
    body: (rows, links) => workspacesBody(rows, links),
  }),
  workspace: row<'workspace', WorkspaceData>({
    name: 'workspace',
    pattern: ROUTES.workspace.pattern,
    data: async (ctx, p) => workspaceData(await existingWorkspace(ctx.server.home, p.ws)),
    title: (d) => d.ws,
    crumbs: (d) => [{ label: d.ws }],
    body: (d, links) => workspaceBody(d, links),
    live: (d, links) => `${links.workspace(d.ws)}${LIVE}`,
  }),
  agent: row<'agent', AgentData>({
    name: 'agent',
    pattern: ROUTES.agent.pattern,
    data: async (ctx, p) => {
      const ws = await existingWorkspace(ctx.server.home, p.ws)
      await existingAgent(ws, p.agent)
      return agentData(ws, p.agent)
    },
    title: (d) => `${d.agent} · ${d.ws}`,
    crumbs: (d, links) => [wsCrumb(d.ws, links), { label: d.agent }],
    body: (d, links) => agentBody(d, links),
    live: (d, links) => {
      const committed = Math.max(0, ...d.rows.filter((r) => r.state === 'committed').map((r) => r.n))
      return `${links.agent(d.ws, d.agent)}${LIVE}?after=${committed}&max=${barMax(d.rows)}`
    },
  }),
  step: row<'step', StepPage>({
    name: 'step',
    pattern: ROUTES.step.pattern,
    data: async (ctx, p) => {
      const ws = await existingWorkspace(ctx.server.home, p.ws)
      await existingAgent(ws, p.agent)
      const d = await stepData(ws, p.agent, p.n)
      const action = pathOf('fork', { ws: ws.name, agent: p.agent, n: p.n })
      const { server } = ctx
      const options = await forkOptions(ws, server.config, p.agent, p.n, server.configReader(ws.name))
      return { ...d, fork: { options, action, value: formValue(ctx.secret, action) } }
    },
    title: (d) => `${d.agent} ${formatStep(d.n)} · ${d.ws}`,
    crumbs: (d, links) => [
      wsCrumb(d.ws, links),
      { label: d.agent, href: links.agent(d.ws, d.agent) },
      { label: formatStep(d.n) },
    ],
    body: (d, links) => stepBody(d, links, d.fork && forkForm(d.fork.options, d.fork.action, d.fork.value)),
  }),
  cohort: row<'cohort', CohortPage>({
    name: 'cohort',
    pattern: ROUTES.cohort.pattern,
    data: async (ctx, p) => ({
      ...(await cohortData(await existingWorkspace(ctx.server.home, p.ws), p.agent, p.n)),
      refusals: firedRefusals(ctx.url.searchParams.get('fired')),
    }),
    title: (d) => `cohort ${d.agent}@${d.n}`,
    crumbs: (d, links) => [
      wsCrumb(d.ws, links),
      { label: d.agent, href: links.agent(d.ws, d.agent) },
      { label: `cohort @${formatStep(d.n)}` },
    ],
    body: (d, links) =>
      cohortBody(
        d,
        links,
        d.refusals?.length
          ? markup`<div class="notice">${d.refusals.map((r) => markup`<p>${r}</p>`)}</div>`
          : undefined,
      ),
    live: (d, links) => `${links.cohort(d.ws, d.agent, d.n)}${LIVE}`,
  }),
}

export type PageName = keyof typeof PAGES

/** A page as the frame shows it. */
export interface Rendered {
  title: string
  trail: Crumb[]
  body: Html
  live: string | undefined
}

async function render<K extends RouteName, D>(
  r: PageRow<K, D>,
  ctx: PageContext,
  params: Params<K>,
  links: Links,
): Promise<Rendered> {
  const d = await r.data(ctx, params)
  return { title: r.title(d), trail: r.crumbs(d, links), body: r.body(d, links), live: r.live?.(d, links) }
}

/** Load and render the page a route names; undefined for a route that is no page of the table. */
export function renderPage(route: Route, ctx: PageContext, links: Links): Promise<Rendered> | undefined {
  switch (route.page) {
    case 'home':
      return render(PAGES.home, ctx, route, links)
    case 'workspace':
      return render(PAGES.workspace, ctx, route, links)
    case 'agent':
      return render(PAGES.agent, ctx, route, links)
    case 'step':
      return render(PAGES.step, ctx, route, links)
    case 'cohort':
      return render(PAGES.cohort, ctx, route, links)
    default:
      return undefined
  }
}
