/**
 * The status line's answer (`GET /ui/api/statusline?session=<id>`, asked by `holdfast statusline`
 * after every Claude Code message): the agent a Claude Code session's requests went to, the cache
 * read share of its last step, and the cost and hold savings of the session's agents so far (the
 * agent, its subagents and side requests; not a second session's), and the agent's latest cache
 * miss with its cause. Invariant: a committed step's row is read once and kept, and its cause is
 * `why`'s only where its reads fell short (report/why listedCause keeps those), so a long session
 * answers in the time of its new steps.
 */
import type { ServerContext } from '../live/context'
import { formatStep } from '../core/naming'
import { fmtUsd, HOLD_SAVED, plural } from '../core/saving-words'
import { META_FILE, stepTreePath } from '../core/layout'
import { listSteps, readStepMeta } from '../record/read'
import { splitOf } from './agents'
import { agentsOf } from './lookup'
import { cacheReadShare, stepRow, type StepRow, totals } from './steps'
import { listedCause } from './why'
import type { Cause } from '../core/cache-cause'
import type { StepMeta } from '../../generated/meta'
import { readFileAt, readRef } from '../store/git'
import { agentRef } from '../core/layout'
import type { Workspace } from '../store/workspace'

export interface StatusLine {
  workspace: string
  agent: string
  steps: number
  /** The last step's cache read share (0–1), or null when it reported no usage. */
  last_read_share: number | null
  cost_usd: number
  unpriced: number
  saved_usd: number
  /** The agent's latest cache miss and its cause (proxy/core/cache-cause), or null when none. */
  last_miss: { step: string; cause: Cause } | null
}

/** Causes that are no miss: said only when a step missed. */
const NOT_A_MISS: ReadonlySet<Cause> = new Set(['no_miss', 'held', 'first_step', 'fork'])

/** The agent's latest miss: the newest step whose cause (report/why listedCause) is a miss. */
async function lastMiss(
  ws: Workspace,
  agent: string,
  rows: readonly StepRow[],
): Promise<{ step: string; cause: Cause } | null> {
  for (let i = rows.length - 1; i >= 0; i--) {
    const r = rows[i] as StepRow
    const cause = await listedCause(ws, agent, r, rows[i - 1])
    if (cause && !NOT_A_MISS.has(cause)) return { step: r.step, cause }
  }
  return null
}

const SESSION_HEADER = 'x-claude-code-session-id'

/** Rows of committed steps, kept: they never change. Keyed `<home>\0<ws>\0<agent>`. */
const committedRows = new Map<string, Map<number, StepRow>>()
const sessions = new Map<string, { ws: string; agent: string }>()

async function rowsOf(ws: Workspace, agent: string): Promise<StepRow[]> {
  const key = `${ws.home}\0${ws.name}\0${agent}`
  let kept = committedRows.get(key)
  if (!kept) committedRows.set(key, (kept = new Map()))
  const tip = await readRef(ws.repo, agentRef(agent))
  const out: StepRow[] = []
  for (const ref of await listSteps(ws, agent)) {
    const known = ref.committed ? kept.get(ref.n) : undefined
    if (known) {
      out.push(known)
      continue
    }
    let meta: StepMeta | undefined
    const bytes =
      ref.committed && tip
        ? await readFileAt(ws.repo, tip, `${stepTreePath(agent, ref.n)}/${META_FILE}`)
        : undefined
    if (bytes) meta = JSON.parse(bytes.toString('utf8')) as StepMeta
    else meta = await readStepMeta(ws, agent, ref.n).catch(() => undefined)
    const row = stepRow({ ref, meta }, 'in flight')
    if (ref.committed && meta) kept.set(ref.n, row)
    out.push(row)
  }
  return out
}

/** The agent a session's main requests went to, among the agents this server has seen. */
async function sessionAgent(
  ctx: ServerContext,
  session: string,
): Promise<{ ws: string; agent: string } | undefined> {
  const known = sessions.get(`${ctx.home}\0${session}`)
  if (known) return known
  let best: { ws: string; agent: string; at: string; rank: number } | undefined
  for (const a of ctx.agents.values()) {
    const n = a.next - 1
    if (n < 1) continue
    const meta = await readStepMeta(a.ws, a.name, n).catch(() => undefined)
    if (meta?.request_headers?.[SESSION_HEADER] !== session) continue
    const kind = splitOf(a.name).kind
    const rank = kind === 'main' || kind === 'session' ? 1 : 0
    if (!best || rank > best.rank || (rank === best.rank && meta.started_at > best.at))
      best = { ws: a.ws.name, agent: a.name, at: meta.started_at, rank }
  }
  if (!best) return undefined
  // A split (subagent, side request) stands for its root when the root is not seen yet.
  const found = { ws: best.ws, agent: best.rank ? best.agent : rootOf(best.agent) }
  if (best.rank) sessions.set(`${ctx.home}\0${session}`, found)
  return found
}

/** The agent a split hangs from, up to the first main or session agent. */
function rootOf(agent: string): string {
  let a = agent
  for (let s = splitOf(a); s.parent && s.kind !== 'session'; s = splitOf(a)) a = s.parent
  return a
}

/** Whether `name` belongs to `agent`'s session: itself, its subagents and side requests (not `.s-` sessions). */
export const inSession = (agent: string, name: string): boolean =>
  name === agent || (name.startsWith(`${agent}.`) && !name.slice(agent.length).startsWith('.s-'))

export async function statusFor(ctx: ServerContext, session: string): Promise<StatusLine | undefined> {
  const found = await sessionAgent(ctx, session)
  if (!found) return undefined
  const ws = ctx.workspace(found.ws)
  const own = await rowsOf(ws, found.agent)
  const all: StepRow[] = []
  for (const name of await agentsOf(ws)) {
    if (inSession(found.agent, name)) all.push(...(name === found.agent ? own : await rowsOf(ws, name)))
  }
  const t = totals(all)
  const last = own[own.length - 1]
  return {
    workspace: found.ws,
    agent: found.agent,
    steps: own.length,
    last_read_share: last ? cacheReadShare(last) : null,
    cost_usd: t.cost_usd,
    unpriced: t.unpriced,
    saved_usd: t.saved_usd,
    last_miss: await lastMiss(ws, found.agent, own),
  }
}

/** The line Claude Code shows: `holdfast ws/main · 42 steps (last 042) · cache 97% · hold saved $0.12 · $1.84`. */
export function statusText(s: StatusLine): string {
  const share = s.last_read_share === null ? '-' : `${Math.round(s.last_read_share * 100)}%`
  return [
    `holdfast ${s.workspace}/${s.agent}`,
    `${plural(s.steps, 'step')} (last ${formatStep(Math.max(1, s.steps))})`,
    `cache ${share}`,
    ...(s.last_miss ? [`last miss ${s.last_miss.step}: ${s.last_miss.cause}`] : []),
    `${HOLD_SAVED} ${fmtUsd(s.saved_usd)}`,
    `${fmtUsd(s.cost_usd)}${s.unpriced ? ` + ${s.unpriced} unpriced` : ''}`,
  ].join(' · ')
}
