/**
 * `POST /_holdfast/dispatch {argv}`: the dispatcher over HTTP (origin `http` in the ops log), the
 * same argv as `holdfast dispatch`. Answers `{child, exit, stdout, stderr}` once the child's first
 * step has been answered; a refusal is `exit: 1` with the sentence, and leaves nothing behind.
 */
import type http from 'node:http'
import { dispatchOne } from '../attempts/fire'
import { parseDispatchArgv } from '../core/attempt'
import { HoldfastError } from '../core/errors'
import { readJsonBody } from './body'
import type { ServerContext } from '../live/context'
import { sendJson } from '../http/respond'

export async function handleDispatchAdmin(
  ctx: ServerContext,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<void> {
  if (req.method !== 'POST') throw new HoldfastError('NOT_FOUND', 'POST /_holdfast/dispatch {argv: [...]}')
  const body = await readJsonBody(req)
  const argv = body.argv
  if (!Array.isArray(argv) || !argv.every((a) => typeof a === 'string')) {
    throw new HoldfastError(
      'BAD_JSON',
      'argv must be an array of strings: ["dispatch", role, ws, parent, "--goal", …, "--from", …]',
    )
  }
  const parsed = parseDispatchArgv(argv as string[])
  if (!parsed.ok) {
    sendJson(res, 200, { child: null, exit: 2, stdout: '', stderr: `holdfast: ${parsed.error}\n` })
    return
  }
  const r = await dispatchOne(ctx.home, ctx.config, parsed.args, 'http')
  sendJson(res, 200, { child: r.child ?? null, exit: r.exit, stdout: r.stdout, stderr: r.stderr })
}
