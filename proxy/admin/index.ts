/**
 * The `/_holdfast/` admin surface: health now; tool calls, dispatch and hook events join it.
 * Invariant: requests reach here only after the guard (no Origin header, JSON bodies only);
 * answers are holdfast's own JSON, errors `{error: {code, message}}`.
 */
import type http from 'node:http'
import { HoldfastError } from '../core/errors'
import type { Addressed } from '../http/address'
import { handleDispatchAdmin } from './dispatch'
import { handleEventsAdmin } from './events'
import { handleRemoteAdmin } from './remote'
import { handleRecoverAdmin } from './recover'
import type { ServerContext } from '../live/context'
import { sendError, sendJson } from '../http/respond'

const startedAt = Date.now()

/** Each figure in MB, to one decimal. */
const inMb = (usage: object): Record<string, number> =>
  Object.fromEntries(
    Object.entries(usage).map(([k, v]) => [k, Math.round(((v as number) / 1048576) * 10) / 10]),
  )

export async function handleAdmin(
  ctx: ServerContext,
  a: Addressed,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<void> {
  const pathname = a.path.split('?')[0]
  try {
    if (req.method === 'GET' && pathname === '/_holdfast/health') {
      const worker = await ctx.committer.memory().catch(() => undefined)
      const {
        lastCollectionMs: workerCollectionMs,
        lastTrimMs: workerTrimMs,
        ...workerHeap
      } = worker ?? { lastCollectionMs: null, lastTrimMs: null }
      const ms = (v: number | null | undefined): number | null => (v == null ? null : Math.round(v * 10) / 10)
      sendJson(res, 200, {
        ok: !ctx.closing,
        pid: process.pid,
        home: ctx.home,
        uptime_s: Math.round((Date.now() - startedAt) / 1000),
        in_flight: ctx.inflight.size,
        memory_mb: {
          ...inMb(process.memoryUsage()),
          commit_worker: worker ? inMb(workerHeap) : null,
        },
        idle_collection_ms: { server: ms(ctx.idle.lastCollectionMs), commit_worker: ms(workerCollectionMs) },
        malloc_trim_ms: { server: ms(ctx.idle.lastTrimMs), commit_worker: ms(workerTrimMs) },
        previous_cache: ctx.records.previousRecords.held,
        read_cache: ctx.reads.held,
        commit_backlog: { steps: ctx.backlog.size, limit: ctx.backlog.limit },
        // Workspaces whose commits wait out a disk fault (full, read-only, a ref lock), and since when.
        commit_faults: (await ctx.committer.faults().catch(() => [])).map(({ home: _home, ...f }) => f),
        agents: [...ctx.agents.values()].map((s) => ({
          workspace: s.ws.name,
          agent: s.name,
          next_step: s.next,
          committed: s.committed,
          stalled: s.stalled ? s.stalled.message : null,
          // Answered steps whose answer only memory holds until their commit lands (a full disk).
          answers_in_memory: [...s.answersInMemory.keys()].sort((x, y) => x - y),
        })),
        remote: ctx.remotes?.health() ?? [],
        // The spans' export (null: no endpoint): what the backend took, and what was dropped or lost.
        telemetry: ctx.telemetry?.health() ?? null,
      })
      return
    }
    if (pathname !== undefined && /^\/_holdfast\/(clients|tools)(\/|$)/.test(pathname)) {
      // Loaded on the first such request: the tool hosts' MCP client is not needed before.
      const { handleClientsAdmin } = await import('./clients')
      await handleClientsAdmin(ctx, req, res, pathname, new URLSearchParams(a.path.split('?')[1] ?? ''))
      return
    }
    if (pathname === '/_holdfast/recover') {
      await handleRecoverAdmin(ctx, req, res)
      return
    }
    if (pathname === '/_holdfast/dispatch') {
      await handleDispatchAdmin(ctx, req, res)
      return
    }
    if (pathname?.startsWith('/_holdfast/remote/')) {
      await handleRemoteAdmin(ctx, req, res, pathname)
      return
    }
    if (pathname?.startsWith('/_holdfast/events/')) {
      await handleEventsAdmin(ctx, req, res, pathname)
      return
    }
    throw new HoldfastError('NOT_FOUND', `no such admin endpoint: ${req.method ?? 'GET'} ${pathname}`)
  } catch (err) {
    sendError(res, undefined, err)
  }
}
