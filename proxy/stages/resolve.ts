/**
 * resolve (DESIGN §5.3, §8, §10): the role the request names (`x-holdfast-role`, else a model equal
 * to a role's name) at the agent's followed config, or the default row of the dialect's row family;
 * then the plugins' `route` hook, shown that route, may choose a role, a row or a model, and the
 * route is computed once more from that choice (nothing is undone: each route is a fresh value).
 * Invariant: roles are read at each step boundary, and the followed config is recorded either way;
 * a row that adds the operator's key (`api_key_env`) serves only a request that carried holdfast's
 * token, and one whose variable is unset is refused; both here, before a step is numbered or recorded.
 */
import { HoldfastError } from '../core/errors'
import type { JsonObject } from '../core/json'
import { type RoleDecl, routeByRole } from '../core/roles'
import type { Change } from '../../generated/meta'
import type { Identified, PluginCall, RouteChoice } from '../../plugins/runner'
import type { RouteView } from '../../plugins/api'
import type { ProviderRow } from '../store/config'
import { readRef } from '../store/git'
import { agentRef, configRef } from '../core/layout'
import { DEFAULT_LINEAGE } from '../store/home'
import type { ServerContext } from '../live/context'
import { requireRowToken } from '../http/access'
import { rowKey, upstreamUrl } from '../http/upstream'
import type { Accepted } from './accept'

/** resolve's value: where the step goes, and what the route changes in the body. */
export interface Route {
  /** The plugin whose route decision this is, or null. */
  plugin: string | null
  provider: string
  row: ProviderRow
  /** The row's key when it names `api_key_env` (never recorded), else the client's own auth goes through. */
  key: string | undefined
  url: URL
  model: string | null
  role: string | null
  configCommit: string | null
  configNote: string | null
  /** Top-level fields the route sets (the role's model, its max tokens), spliced in by compose. */
  overrides: JsonObject
  changes: Change[]
}

/** The roles a step resolves against: its followed config, read at this step boundary. */
interface Roles {
  roles: Record<string, RoleDecl> | undefined
  why: string | undefined
  configCommit: string | null
  configNote: string | null
}

async function readRoles(ctx: ServerContext, who: Identified): Promise<Roles> {
  const ws = ctx.workspace(who.workspace)
  // A workspace that does not exist yet has only the starter config (no roles); it is created
  // when the step is recorded, so a request refused before that leaves nothing on disk.
  if (!ws.exists()) {
    return {
      roles: {},
      why: undefined,
      configCommit: null,
      configNote: 'new workspace: the starter config declares no roles',
    }
  }
  const resolved = await ctx.configReader(who.workspace).resolve(`agent:${who.agent}`, async () => {
    return (
      (await readRef(ws.repo, agentRef(who.agent))) ?? (await readRef(ws.repo, configRef(DEFAULT_LINEAGE)))
    )
  })
  if (!resolved.ok)
    return { roles: undefined, why: resolved.message, configCommit: null, configNote: resolved.message }
  const configCommit = resolved.followed.commit
  const held = resolved.followed.kind === 'held' ? resolved.followed.note : null
  if (!resolved.roles.ok) {
    return { roles: undefined, why: resolved.roles.error, configCommit, configNote: resolved.roles.error }
  }
  return { roles: resolved.roles.value.roles, why: undefined, configCommit, configNote: held }
}

const first = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v)

/** The route for `request` at `roles`, following a plugin's `choice` when there is one. Throws a refusal. */
function routeFor(
  ctx: ServerContext,
  request: Accepted,
  roles: Roles,
  choice: RouteChoice | undefined,
): Omit<Route, 'key'> {
  const { dialect, parsed } = request
  const family = dialect.rows.name
  const r = routeByRole(
    choice?.role ?? first(request.headers['x-holdfast-role']),
    parsed.model,
    roles.roles,
    roles.why,
    ctx.config.providers,
    family,
  )
  if (r.kind === 'refused') throw new HoldfastError(r.code, r.message)
  const provider = choice?.provider ?? (r.kind === 'role' ? r.provider : family)
  const row = ctx.config.providers[provider]
  if (choice?.provider !== undefined && (!row || row.dialect !== family)) {
    throw new HoldfastError(
      'PLUGIN_FAILED',
      `plugin ${choice.by} (route) chose provider row "${provider}", which ${row ? `speaks ${row.dialect}, not ${family}` : 'holdfast.yaml does not declare'}`,
    )
  }
  if (!row) {
    throw new HoldfastError(
      'NO_PROVIDER_ROW',
      `holdfast.yaml declares no provider row "${provider}" for ${dialect.name} requests`,
    )
  }
  const overrides: JsonObject = {}
  const changes: Change[] = []
  let model = typeof parsed.model === 'string' ? parsed.model : null
  if (r.kind === 'role') {
    if (r.model !== parsed.model) {
      overrides.model = r.model
      changes.push({
        field: 'model',
        why: `role "${r.role}" (${r.via === 'header' ? 'x-holdfast-role' : 'model names the role'}) uses ${r.model}`,
      })
    }
    model = r.model
    if (r.maxOutputTokens !== undefined && dialect.clientMaxTokens(parsed) === undefined) {
      overrides[dialect.maxTokensField] = r.maxOutputTokens
      changes.push({
        field: dialect.maxTokensField,
        why: `role "${r.role}" sets max_output_tokens ${r.maxOutputTokens}`,
      })
    }
  }
  if (choice?.model !== undefined && choice.model !== model) {
    overrides.model = choice.model
    const i = changes.findIndex((c) => c.field === 'model')
    if (i >= 0) changes.splice(i, 1)
    changes.push({ field: 'model', why: `${choice.by} chose ${choice.model}` })
    model = choice.model
  }
  return {
    plugin: choice?.by ?? null,
    provider,
    row,
    url: upstreamUrl(row, request.path),
    model,
    role: r.kind === 'role' ? r.role : null,
    configCommit: roles.configCommit,
    configNote: roles.configNote,
    overrides,
    changes,
  }
}

/** What the plugins see of a route. */
export const routeView = (r: Omit<Route, 'key'>): RouteView => ({
  provider: r.provider,
  model: r.model,
  role: r.role,
  plugin: r.plugin,
})

export async function resolve(
  ctx: ServerContext,
  request: Accepted,
  who: Identified,
  plugins: PluginCall,
): Promise<Route> {
  // The plugin's choice is resolved against the same config the first route read.
  const roles = await readRoles(ctx, who)
  let route = routeFor(ctx, request, roles, undefined)
  const choice = await plugins.route(routeView(route))
  if (choice) {
    try {
      route = routeFor(ctx, request, roles, choice)
    } catch (err) {
      if (err instanceof HoldfastError && err.code === 'PLUGIN_FAILED') throw err
      const { by, ...chose } = choice
      throw new HoldfastError(
        'PLUGIN_FAILED',
        `plugin ${by} (route) chose ${JSON.stringify(chose)}, which holdfast refused: ${(err as Error).message}`,
        { cause: err },
      )
    }
    plugins.sentTo(routeView(route))
  }
  requireRowToken(request.tokenCarried, route.provider, route.row)
  return { ...route, key: rowKey(route.provider, route.row) }
}
