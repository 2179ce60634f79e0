/**
 * One request, stage by stage (DESIGN §5), written once, in order:
 *
 *   accept → identify → resolve → compose → hold → record → forward → finish
 *
 * Each stage is a function (`stages/`) that takes what earlier stages returned and returns its own
 * typed value; a stage that refuses throws a HoldfastError, answered here in the dialect's own
 * envelope (docs/architecture.md lists what each stage answers). Invariant: the hold and the
 * record run in one critical section of the agent (numbering, the previous record, the write);
 * the record is written before the send and nothing is sent when it cannot be written; plugins
 * see exactly one of onResponse / onError per request. `count_tokens` runs the same stages up to
 * the hold, then forwards without a record.
 */
import type { ServerResponse } from 'node:http'
import { HoldfastError } from './core/errors'
import type { PluginCall } from '../plugins/runner'
import type { StepMeta } from './record'
import type { FinishSummary } from './record/finish'
import type { ServerContext } from './live/context'
import { sendError } from './http/respond'
import { accept, type Incoming } from './stages/accept'
import { resolve } from './stages/resolve'
import { answerIdKnown, compose } from './stages/compose'
import { hold, previousForCount } from './stages/hold'
import { record } from './stages/record'
import { forward } from './stages/forward'
import { failedForward, finish } from './stages/finish'

/** Refusals that leave a request body unread. */
const BODY_CUT: ReadonlySet<string> = new Set([
  'BODY_TOO_LARGE',
  'REQUEST_TIMEOUT',
  'BODY_TOO_SLOW',
  'SHUTTING_DOWN',
])

/** Run one recorded step (or one `count_tokens` call) from its request to its committed record. */
export async function handle(ctx: ServerContext, incoming: Incoming, res: ServerResponse): Promise<void> {
  let plugins: PluginCall | undefined
  let step
  try {
    if (ctx.closing) throw new HoldfastError('SHUTTING_DOWN', 'holdfast is shutting down; retry shortly')
    const request = accept(incoming, await incoming.body(), ctx.reads)
    plugins = ctx.plugins.begin(request.facts)
    const who = await plugins.identify()
    const route = await resolve(ctx, request, who, plugins)
    await answerIdKnown(ctx, request, who, route)
    const composed = compose(ctx, request, who, route)
    if (request.kind === 'count_tokens') {
      // Unrecorded: it holds against the previous record and writes nothing.
      const held = hold(ctx, request, composed, await previousForCount(ctx, who, request.dialect))
      const f = await forward(ctx, { request, who, route, held }, res)
      await plugins.settled(f)
      return
    }
    await ctx.backlog.room()
    // Taken after the wait and numbered at once: an idle agent forgotten meanwhile is made again.
    const agent = ctx.agent(who.workspace, who.agent)
    step = await agent.critical(async (n) => {
      const held = hold(ctx, request, composed, await ctx.records.previous(agent, n, request.dialect), n)
      return record(ctx, { request, who, route, held }, agent, n)
    })
  } catch (err) {
    // A body refused before its end: the rest of it must not be read as the next request.
    if (err instanceof HoldfastError && BODY_CUT.has(err.code)) res.setHeader('connection', 'close')
    sendError(res, incoming.dialect, err)
    await plugins?.failed(err)
    return
  }
  let done: FinishSummary | undefined
  let forwarded
  try {
    forwarded = await forward(ctx, step, res)
  } catch (err) {
    // forward never throws; should it, the step is still committed, with the error.
    forwarded = failedForward(err)
  }
  try {
    done = await finish(ctx, step, forwarded)
  } catch (err) {
    ctx.log.error(
      { ws: step.workspace, agent: step.agent.name, step: step.meta.step, err: String(err) },
      'finishing a step failed',
    )
  }
  logStep(ctx, step.meta, done)
  // How it finished; without a finish, the plugins hear it did not (the send half has no outcome).
  await plugins.settled(done ? { ...done, step: step.meta.step } : step.meta)
}

/** The one line a step leaves in the log: who, which step, how it went, what the cache did. */
function logStep(ctx: ServerContext, sent: StepMeta, done: FinishSummary | undefined): void {
  if (!ctx.log.isLevelEnabled('info')) return
  const m = { ...sent, ...done }
  const u = m.usage
  const hold = m.hold.applied ? `held ${m.hold.held.join(', ')}` : m.hold.reason
  ctx.log.info(
    {
      ws: m.workspace,
      agent: m.agent,
      step: m.step,
      status: m.status ?? null,
      outcome: m.outcome ?? null,
      ttfb_ms: m.ttfb_ms ?? null,
      cache_read: u?.cache_read_tokens ?? null,
      cache_write: u?.cache_write_tokens ?? null,
      hold: m.hold.reason,
    },
    `${m.workspace}/${m.agent} ${m.step} ${m.status ?? m.outcome ?? '-'} ttfb ${m.ttfb_ms ?? '-'} ms, cache read ${u?.cache_read_tokens ?? '-'} write ${u?.cache_write_tokens ?? '-'}, hold: ${hold}`,
  )
}
