/**
 * `POST /_holdfast/remote/sync` `{workspace}`: the running server looks at the workspace's
 * remote now (`holdfast remote set` asks it after setting one): it pushes whatever the remote
 * lacks and pulls config, and answers the pull's report (`{workspace, remote: false}` when the
 * workspace has no remote named holdfast). Invariant: the push runs in the background, as always;
 * the answer waits only for the config pull.
 */
import type http from 'node:http'
import { HoldfastError } from '../core/errors'
import { checkName } from '../core/naming'
import { readJsonBody } from './body'
import type { ServerContext } from '../live/context'
import { sendJson } from '../http/respond'

export async function handleRemoteAdmin(
  ctx: ServerContext,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  pathname: string,
): Promise<void> {
  if (req.method !== 'POST' || pathname !== '/_holdfast/remote/sync') {
    throw new HoldfastError('NOT_FOUND', `no such admin endpoint: ${req.method ?? 'GET'} ${pathname}`)
  }
  const body = await readJsonBody(req, 4096)
  if (typeof body.workspace !== 'string')
    throw new HoldfastError('BAD_REQUEST', 'field "workspace" must be a string')
  const problem = checkName('workspace', body.workspace)
  if (problem) throw new HoldfastError('BAD_NAME', problem)
  const ws = ctx.workspace(body.workspace)
  if (!ws.exists()) throw new HoldfastError('NOT_FOUND', `no workspace "${body.workspace}"`)
  const report = await ctx.remotes?.sync(ws)
  sendJson(res, 200, { workspace: ws.name, remote: report !== undefined, config: report ?? null })
}
