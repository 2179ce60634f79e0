/**
 * The tool-host part of the admin surface (DESIGN §7): `GET /_holdfast/clients[/list]?workspace=`,
 * `GET …/clients/get?client=`, `GET …/clients/loaded?workspace=&agent=`, `POST …/clients/load`
 * and `…/clients/unload` `{workspace, agent, client, tools}`, `GET …/clients/tool?dialect=`, and
 * `POST /_holdfast/tools/call {workspace, agent, name, input}`. Invariant: the answers are the
 * acts' own (`{message, …}`, or `{error: {code, message}}` with the code's status); a routed call
 * always answers 200 `{content, is_error}`. Omitted workspace/agent are holdfast.yaml's defaults.
 */
import type http from 'node:http'
import { HoldfastError } from '../core/errors'
import type { Json } from '../core/json'
import { assertName } from '../core/naming'
import { anthropic, DIALECT_NAMES, dialectByName } from '../dialects'
import { type Act, getClient, listClients, loadedTools, loadTools, unloadTools } from '../tools/acts'
import { routeCall } from '../tools/calls'
import { clientsToolDefinition } from '../tools/clients-tool'
import { readJsonBody } from './body'
import type { ServerContext } from '../live/context'
import { sendError, sendJson } from '../http/respond'

function text(v: Json | string | null | undefined, field: string, fallback?: string): string {
  if (typeof v === 'string') return v
  if ((v === undefined || v === null) && fallback !== undefined) return fallback
  throw new HoldfastError('BAD_REQUEST', `field "${field}" must be a string`)
}

function names(v: Json | undefined, field: string, required: boolean): string[] {
  if (v === undefined && !required) return []
  if (Array.isArray(v) && v.every((s) => typeof s === 'string')) return v as string[]
  throw new HoldfastError('BAD_REQUEST', `field "${field}" must be an array of tool names`)
}

function answer<T extends object>(res: http.ServerResponse, act: Act<T>): void {
  if (act.ok) sendJson(res, 200, { message: act.message, ...act.body })
  else sendError(res, undefined, new HoldfastError(act.code, act.message))
}

export async function handleClientsAdmin(
  ctx: ServerContext,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  pathname: string,
  query: URLSearchParams,
): Promise<void> {
  const { workspace: dws, agent: dagent } = ctx.config.defaults
  const q = (k: string): string | undefined => query.get(k) ?? undefined
  switch (`${req.method ?? 'GET'} ${pathname}`) {
    case 'GET /_holdfast/clients':
    case 'GET /_holdfast/clients/list':
      return answer(res, await listClients(ctx.tools, q('workspace')))
    case 'GET /_holdfast/clients/get':
      return answer(res, await getClient(ctx.tools, text(q('client'), 'client')))
    case 'GET /_holdfast/clients/loaded':
      return answer(
        res,
        loadedTools(ctx.home, text(q('workspace'), 'workspace', dws), text(q('agent'), 'agent', dagent)),
      )
    case 'GET /_holdfast/clients/tool': {
      const name = q('dialect') ?? anthropic.name
      const dialect = dialectByName(name)
      if (!dialect) {
        throw new HoldfastError(
          'BAD_REQUEST',
          `dialect must be one of ${DIALECT_NAMES.map((n) => JSON.stringify(n)).join(', ')}, not ${JSON.stringify(name)}`,
        )
      }
      return sendJson(res, 200, clientsToolDefinition(dialect))
    }
    case 'POST /_holdfast/clients/load':
    case 'POST /_holdfast/clients/unload': {
      const b = await readJsonBody(req, ctx.bodyLimit)
      const ws = text(b.workspace, 'workspace', dws)
      const agent = text(b.agent, 'agent', dagent)
      const client = text(b.client, 'client')
      if (pathname.endsWith('/load')) {
        return answer(res, await loadTools(ctx.tools, ws, agent, client, names(b.tools, 'tools', true)))
      }
      return answer(res, await unloadTools(ctx.home, ws, agent, client, names(b.tools, 'tools', false)))
    }
    case 'POST /_holdfast/tools/call': {
      const b = await readJsonBody(req, ctx.bodyLimit)
      const result = await routeCall(
        ctx.tools,
        assertName('workspace', text(b.workspace, 'workspace', dws)),
        assertName('agent', text(b.agent, 'agent', dagent)),
        text(b.name, 'name'),
        b.input ?? {},
      )
      return sendJson(res, 200, result)
    }
    default:
      throw new HoldfastError('NOT_FOUND', `no such admin endpoint: ${req.method ?? 'GET'} ${pathname}`)
  }
}
