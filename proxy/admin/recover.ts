/**
 * `POST /_holdfast/recover {workspace}`: `holdfast recover` against a running serve. Every commit
 * waiting out a fault is tried again now; an agent whose commit failed for good gets its journal
 * steps queued again (a step already on its branch is not committed twice); entries an older
 * holdfast kept in quarantine go to `agents/<agent>.recovered`. Answers what it did once the
 * queued commits landed, or after `wait_ms` with what still waits (the faults).
 */
import type http from 'node:http'
import { assertName, checkName } from '../core/naming'
import { HoldfastError } from '../core/errors'
import { readJsonBody } from './body'
import type { ServerContext } from '../live/context'
import { journalAgents } from '../record/journal/reader'
import { recoverQuarantine } from '../record/recover'
import { sendJson } from '../http/respond'

export async function handleRecoverAdmin(
  ctx: ServerContext,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<void> {
  if (req.method !== 'POST') throw new HoldfastError('NOT_FOUND', 'POST /_holdfast/recover {workspace}')
  const body = await readJsonBody(req)
  if (typeof body.workspace !== 'string')
    throw new HoldfastError('BAD_FIELD', 'workspace must be the name of a workspace')
  const name = assertName('workspace', body.workspace)
  const waitMs =
    typeof body.wait_ms === 'number' && body.wait_ms >= 0 ? Math.min(body.wait_ms, 600_000) : 10_000
  const ws = ctx.workspace(name)
  if (!ws.exists()) throw new HoldfastError('NOT_FOUND', `no workspace "${name}" in this home`)
  await ctx.committer.retry()
  const requeued: { agent: string; steps: number }[] = []
  for (const agent of journalAgents(ws.journalDir)) {
    if (checkName('agent', agent)) continue
    const steps = await ctx.agent(name, agent).requeue()
    if (steps > 0) requeued.push({ agent, steps })
  }
  const quarantine = await recoverQuarantine(ws)
  const agents = [...ctx.agents.values()].filter((a) => a.ws.name === name)
  let timer: NodeJS.Timeout | undefined
  const landed = await Promise.race([
    Promise.all(agents.map((a) => a.drained())).then(() => true),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), waitMs))),
  ])
  clearTimeout(timer)
  const faults = (await ctx.committer.faults()).filter((f) => f.ws === name && f.home === ctx.home)
  sendJson(res, 200, {
    workspace: name,
    requeued,
    brought: quarantine.brought,
    refused: quarantine.refused,
    landed,
    faults: faults.map(({ since, error, attempts, waiting }) => ({ since, error, attempts, waiting })),
    agents: agents.map((a) => ({
      agent: a.name,
      committed: a.committed,
      stalled: a.stalled?.message ?? null,
    })),
  })
}
