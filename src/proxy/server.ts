/**
 * The only socket code: node:http in, one Exchange per recorded request through the pipeline,
 * pass-through for the rest of `/v1/`, and the `/_holdfast/` admin surface.
 * Invariant: every request is guarded (Host, token, Origin) before anything else; a refused or
 * malformed request changes nothing on disk.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { HoldfastError } from '../core/errors'
import { anthropic, dialectByName, openai } from '../dialects'
import type { DialectName } from '../dialects/types'
import { address, type Addressed, guard, type Guard } from './address'
import { handleAdmin } from './admin'
import type { ServerContext } from './context'
import { finish, forward } from './forward'
import {
  accept,
  applyHold,
  authorize,
  compose,
  type Exchange,
  holdAndRecord,
  identify,
  readPrevious,
  resolve,
} from './pipeline'
import { sendError } from './respond'
import { routeByPlugins } from '../plugins/host'
import { rowKey, upstreamUrl } from './upstream'

/** Read the whole body, refusing (413) beyond `limit` bytes. */
export async function readBody(req: http.IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'])
  if (Number.isFinite(declared) && declared > limit) {
    throw new HoldfastError(
      'BODY_TOO_LARGE',
      `the request body (${declared} bytes) is over the ${limit}-byte limit`,
    )
  }
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > limit)
      throw new HoldfastError('BODY_TOO_LARGE', `the request body is over the ${limit}-byte limit`)
    chunks.push(chunk)
  }
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size)
}

async function handleStep(
  ctx: ServerContext,
  a: Addressed,
  req: http.IncomingMessage,
  res: http.ServerResponse,
) {
  const dialect = dialectByName((a.endpoint as { dialect: DialectName }).dialect)
  let ex: Exchange | undefined
  try {
    if (ctx.closing) throw new HoldfastError('SHUTTING_DOWN', 'holdfast is shutting down; retry shortly')
    const raw = await readBody(req, ctx.bodyLimit)
    ex = accept(
      dialect,
      a.endpoint.kind === 'step' ? 'step' : 'count_tokens',
      a.path,
      a.workspace,
      a.agent,
      req.headers,
      raw,
    )
    await identify(ctx, ex)
    await resolve(ctx, ex)
    await routeByPlugins(ctx, ex) // plugins decide after resolve, before compose and the hold
    authorize(ex)
    compose(ctx, ex)
    if (ex.kind === 'count_tokens') {
      // Unrecorded: it reads the previous record, and writes nothing (a new workspace stays unmade).
      let previous
      if (ctx.workspace(ex.workspace).exists()) {
        const agent = ctx.agent(ex.workspace, ex.agent)
        await agent.init()
        previous = readPrevious(ex, agent, agent.next)
      }
      applyHold(ctx, ex, previous)
      await ctx.plugins.settled(ex, await forward(ctx, ex, res))
      return
    }
    await holdAndRecord(ctx, ex, ctx.agent(ex.workspace, ex.agent))
  } catch (err) {
    if (err instanceof HoldfastError && err.code === 'BODY_TOO_LARGE') res.setHeader('connection', 'close')
    sendError(res, dialect, err)
    if (ex) await ctx.plugins.failed(ex, err)
    return
  }
  const step = ex.step as NonNullable<Exchange['step']>
  try {
    const f = await forward(ctx, ex, res)
    await finish(ctx, ex, f)
  } catch (err) {
    ctx.log.error(
      { ws: ex.workspace, agent: ex.agent, step: step.meta.step, err: String(err) },
      'finishing a step failed',
    )
  } finally {
    step.release()
  }
  await ctx.plugins.settled(ex, step.meta) // finish's meta; the send half alone if finish failed
}

function handlePass(
  ctx: ServerContext,
  a: Addressed,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): void {
  const dialect = dialectByName((a.endpoint as { dialect: DialectName }).dialect)
  const row = ctx.config.providers[dialect.name]
  if (!row) {
    sendError(
      res,
      dialect,
      new HoldfastError('NO_PROVIDER_ROW', `holdfast.yaml declares no provider row "${dialect.name}"`),
    )
    return
  }
  let key: string | undefined
  try {
    key = rowKey(dialect.name, row)
  } catch (err) {
    sendError(res, dialect, err)
    return
  }
  const target = upstreamUrl(row, a.path)
  ctx.upstream.passThrough(req, res, target, row, key, (err) => {
    sendError(
      res,
      dialect,
      new HoldfastError(
        'UPSTREAM_UNREACHABLE',
        `provider row "${dialect.name}" at ${target.origin} could not be reached: ${err.message}`,
      ),
    )
  })
}

export function createServer(ctx: ServerContext, g: Guard): http.Server {
  const server = http.createServer({ noDelay: true, keepAlive: true }, (req, res) => {
    const method = req.method ?? 'GET'
    const url = req.url ?? '/'
    let a: Addressed
    try {
      a = address(method, url, req.headers, ctx.config.defaults)
      guard(g, a.endpoint, method, req.headers)
    } catch (err) {
      const kind = /\/v1\/chat\/completions/.test(url) ? openai : /\/v1\//.test(url) ? anthropic : undefined
      res.setHeader('connection', 'close')
      sendError(res, url.includes('/_holdfast/') || /\/mcp(\?|$)/.test(url) ? undefined : kind, err)
      return
    }
    switch (a.endpoint.kind) {
      case 'step':
      case 'count_tokens':
        void ctx.track(handleStep(ctx, a, req, res))
        return
      case 'pass':
        handlePass(ctx, a, req, res)
        return
      case 'admin':
        void ctx.track(handleAdmin(ctx, a, req, res))
        return
      case 'mcp':
        // Not tracked: a session's event stream stays open until the client or shutdown ends it.
        ctx.mcp.handle(req, res, a.workspace, a.agent).catch((err: unknown) => sendError(res, undefined, err))
        return
      default:
        sendError(res, undefined, new HoldfastError('NOT_FOUND', `no such endpoint: ${method} ${a.path}`))
    }
  })
  server.headersTimeout = 60_000
  server.requestTimeout = 0 // a long upload or answer is the provider's business, not ours
  return server
}

/** Listen, resolving with the bound address; a port in use is one sentence naming it. */
export function listen(server: http.Server, host: string, port: number): Promise<AddressInfo> {
  return new Promise((resolvePromise, reject) => {
    const onError = (err: NodeJS.ErrnoException): void => {
      server.off('listening', onListening)
      if (err.code === 'EADDRINUSE') reject(new Error(`port ${port} on ${host} is already in use`))
      else if (err.code === 'EADDRNOTAVAIL')
        reject(new Error(`address ${host} is not available on this machine`))
      else reject(err)
    }
    const onListening = (): void => {
      server.off('error', onError)
      resolvePromise(server.address() as AddressInfo)
    }
    server.once('error', onError)
    server.once('listening', onListening)
    server.listen(port, host)
  })
}
