/**
 * Recovery: every journal step not yet on its agent's branch is finished from what reached the
 * journal and committed, in step order. An answer whose completion marker was written is finished
 * as the worker would have (it was delivered); one cut off is `interrupted`, its bytes kept as
 * `response.txt`; a step recorded but never sent is `not_sent`; a step whose answer the journal
 * holds damaged keeps its request and says where the damaged bytes went. Invariant: nothing
 * answered is ever deleted: a journal file goes only once every step in it is on its branch;
 * steps that cannot be committed now (a read-only or full disk) stay in the journal with their
 * numbers and are committed later (the serve's commit worker, or `holdfast recover`); bytes no
 * whole frame accounts for are copied aside byte for byte to
 * `<home>/quarantine/<ws>/<agent>/damaged/` and reported; a number given out is never given again.
 * Recovery never stops `serve`.
 */
import fs from 'node:fs'
import path from 'node:path'
import { checkName, formatStep } from '../../core/naming'
import type { HoldfastConfig } from '../../store/config'
import { commitSteps, type StepToCommit } from '../commit/step-commits'
import type { Workspace } from '../../store/workspace'
import type { Logger } from '../../process/log'
import { type CommitJob, recordFiles } from '../commit/job'
import { finishStep, type Finished } from '../finish'
import { FRAME } from '../journal/format'
import {
  type Damage,
  journalAgents,
  type JournalRead,
  type JournalStep,
  readJournal,
} from '../journal/reader'
import type { StepMeta } from '../meta'
import {
  checkPacks,
  checkRefs,
  checkTips,
  type MovedPack,
  type MovedRef,
  type Rewound,
} from '../../store/git'
import { AGENTS_PREFIX, RESPONSE_TEXT, META_FILE } from '../../core/layout'
import {
  keepDamage,
  type KeptDamage,
  quarantineAgent,
  type Quarantined,
  quarantineEntries,
  reserveLost,
} from './quarantine'

export type { KeptDamage, Quarantined }

/** Steps of an agent that wait in its journal for a fault to pass. */
export interface Waiting {
  agent: string
  from: number
  to: number
  error: string
}

export interface Recovery {
  /** Loose refs a start found holding no object id, moved aside. */
  refs: MovedRef[]
  /** Packs a start found not whole, moved aside. */
  packs: MovedPack[]
  /** Branches whose tip could not be read, moved back along their reflog. */
  rewound: Rewound[]
  committed: number
  waiting: Waiting[]
  damaged: KeptDamage[]
  /** Numbers given out whose record the journal lost (a damaged send half): never given again. */
  gaps: { agent: string; n: number }[]
  quarantined: Quarantined[]
}

/**
 * The finished record of a step a crash left uncommitted, from what reached the journal. A step
 * that cannot be finished (its send half is not a meta this version reads) is kept as the journal
 * has it, with the reason.
 */
export function finishUnfinished(step: JournalStep, priceTable: HoldfastConfig['prices']): Finished {
  const { meta, head, answer } = step
  if (step.damaged) return damagedStep(step, step.damaged)
  if (head && answer.length === head.bytes) {
    try {
      return finishStep({
        dialect: meta.dialect,
        meta,
        answered: {
          outcome: head.status >= 400 ? 'upstream_error' : 'ok',
          status: head.status,
          headers: head.headers,
          ttfbMs: head.ttfb_ms,
          totalMs: head.total_ms,
          error: null,
          endedAt: head.ended_at,
        },
        answer: { bytes: answer },
        prices: priceTable,
      })
    } catch (err) {
      return asJournaled(step, `this step could not be finished at recovery: ${(err as Error).message}`)
    }
  }
  const cutOff = answer.length > 0
  const done: StepMeta = {
    ...meta,
    ended_at: new Date().toISOString(),
    status: null,
    outcome: step.sent ? 'interrupted' : 'not_sent',
    response_file: cutOff ? RESPONSE_TEXT : null,
    usage: null,
    cost: null,
    stop_reason: null,
    error: step.sent
      ? {
          code: 'INTERRUPTED',
          message: cutOff
            ? `holdfast stopped after ${answer.length} bytes of the answer (kept raw in response.txt); recovered at the next start`
            : 'holdfast stopped before this step finished; recovered at the next start',
        }
      : {
          code: 'NOT_SENT',
          message:
            'holdfast stopped after recording this step and before sending it; the provider never saw it',
        },
  }
  return { meta: done, response: cutOff ? { file: RESPONSE_TEXT, bytes: { bytes: answer } } : null }
}

/** A step whose answer the journal holds damaged: its request and meta, no answer, and where the bytes went. */
function damagedStep(step: JournalStep, d: Damage): Finished {
  return {
    meta: {
      ...step.meta,
      ended_at: step.head?.ended_at ?? new Date().toISOString(),
      status: step.head?.status ?? null,
      outcome: step.sent ? 'interrupted' : 'not_sent',
      response_file: null,
      usage: null,
      cost: null,
      stop_reason: null,
      error: {
        code: 'RECORD_DAMAGED',
        message: `the journal holds part of this step's answer damaged (${d.length} bytes at ${path.basename(d.file)}@${d.offset}); the bytes are kept under quarantine/<ws>/<agent>/damaged/, the answer is not committed`,
      },
    },
    response: null,
  }
}

/** A step kept as the journal has it: its meta as journaled, with why, and its answer raw. */
function asJournaled(step: JournalStep, why: string): Finished {
  return {
    meta: { ...step.meta, error: { code: 'INTERNAL', message: why } } as StepMeta,
    response: step.answer.length > 0 ? { file: RESPONSE_TEXT, bytes: { bytes: step.answer } } : null,
  }
}

/** The commit jobs of an agent's journal steps above `committed`, in step order. */
export function pendingJobs(
  agent: string,
  read: JournalRead,
  committed: number,
  priceTable: HoldfastConfig['prices'],
): CommitJob[] {
  const jobs: CommitJob[] = []
  for (const [n, s] of read.steps) {
    if (n <= committed) continue
    jobs.push({
      agent,
      n,
      model: typeof s.meta.route?.model === 'string' ? s.meta.route.model : null,
      request: s.place,
      finished: finishUnfinished(s, priceTable),
    })
  }
  return jobs
}

/** The numbers above `committed` the journal gave out but holds no record of (a damaged send half). */
export function gapsOf(agent: string, read: JournalRead, committed: number): { agent: string; n: number }[] {
  const gaps: { agent: string; n: number }[] = []
  for (const d of read.damage)
    if (d.type === FRAME.SEND && d.step !== undefined && d.step > committed && !read.steps.has(d.step))
      gaps.push({ agent, n: d.step })
  return gaps
}

/**
 * Commit every journal step of this workspace that is not on its agent's branch yet, as one pack
 * (agent by agent when one agent's entry spoils it). An agent whose steps cannot be committed now
 * keeps them in its journal (`waiting`); an agent whose steps are all committed gets an empty
 * journal.
 */
export async function recoverWorkspace(
  ws: Workspace,
  log: Logger,
  priceTable?: HoldfastConfig['prices'],
): Promise<Recovery> {
  // Before anything reads a ref or an object: what a power cut left half-written is set aside.
  const aside = path.join(path.dirname(ws.repo.gitdir), 'damaged')
  const refs = fs.existsSync(ws.repo.gitdir) ? checkRefs(ws.repo.gitdir, path.join(aside, 'refs')) : []
  const packs = checkPacks(ws.repo.gitdir, path.join(aside, 'packs'))
  await ws.ensure()
  await ws.clearStaleLocks()
  const rewound = await checkTips(ws.repo, path.join(aside, 'refs'))
  for (const r of rewound) {
    const agent = r.ref.slice(AGENTS_PREFIX.length)
    if (r.lost) reserveLost(ws, agent, r.lost.from, r.lost.to, r.reason)
  }
  const out: Recovery = {
    refs,
    packs,
    rewound,
    committed: 0,
    waiting: [],
    damaged: [],
    gaps: [],
    quarantined: [],
  }
  const jobsByAgent = new Map<string, CommitJob[]>()
  for (const agent of journalAgents(ws.journalDir)) {
    let read: JournalRead
    try {
      read = readJournal(path.join(ws.journalDir, agent))
    } catch (err) {
      out.waiting.push({
        agent,
        from: 0,
        to: 0,
        error: `its journal cannot be read: ${(err as Error).message}`,
      })
      continue
    }
    out.damaged.push(...keepDamage(ws, agent, read))
    const badName = checkName('agent', agent)
    if (badName) {
      out.quarantined.push(...quarantineAgent(ws, agent, read, badName))
      continue
    }
    const committed = await ws.committedSteps(agent)
    out.gaps.push(...gapsOf(agent, read, committed))
    const jobs = pendingJobs(agent, read, committed, priceTable)
    if (jobs.length > 0) jobsByAgent.set(agent, jobs)
    else fs.rmSync(path.join(ws.journalDir, agent), { recursive: true, force: true })
  }
  const filesOf = (jobs: readonly CommitJob[]): StepToCommit[] =>
    jobs.map((j) => ({
      agent: j.agent,
      n: j.n,
      model: j.model,
      files: recordFiles(j, j.finished as Finished),
    }))
  let failed: Map<string, Error>
  try {
    failed = (await commitSteps(ws.repo, filesOf([...jobsByAgent.values()].flat()), ws.options)).failed
  } catch {
    // One agent's entry spoiled the shared pack (or the disk refused it): commit agent by agent.
    failed = new Map()
    for (const [agent, jobs] of jobsByAgent) {
      try {
        for (const [a, e] of (await commitSteps(ws.repo, filesOf(jobs), ws.options)).failed) failed.set(a, e)
      } catch (err) {
        failed.set(agent, err instanceof Error ? err : new Error(String(err)))
      }
    }
  }
  for (const [agent, jobs] of jobsByAgent) {
    const err = failed.get(agent)
    const first = jobs[0] as CommitJob
    const last = jobs[jobs.length - 1] as CommitJob
    if (err) {
      // Nothing of this agent moved: its steps stay in the journal, numbers kept, for later.
      out.waiting.push({ agent, from: first.n, to: last.n, error: err.message })
      continue
    }
    out.committed += jobs.length
    log.info(
      { ws: ws.name, agent, from: formatStep(first.n), to: formatStep(last.n) },
      `recovered ${jobs.length} uncommitted step${jobs.length === 1 ? '' : 's'}`,
    )
    fs.rmSync(path.join(ws.journalDir, agent), { recursive: true, force: true })
  }
  return out
}

/** One line per thing recovery wants an operator to know (serve's log, `holdfast recover`). */
export function describeRecovery(ws: string, r: Recovery): { level: 'info' | 'warn'; line: string }[] {
  const lines: { level: 'info' | 'warn'; line: string }[] = []
  for (const x of r.refs)
    lines.push({ level: 'warn', line: `${ws}: ${x.ref} held no object id; moved aside to ${x.to}` })
  for (const p of r.packs)
    lines.push({ level: 'warn', line: `${ws}: pack ${p.name} moved aside to ${p.to}: ${p.reason}` })
  for (const b of r.rewound)
    lines.push({
      level: 'warn',
      line: `${ws}: ${b.reason}; ${b.to ? `moved back to ${b.to.slice(0, 12)}` : 'no earlier commit of it reads: the branch starts again (its old value is kept under damaged/refs/)'}${b.lost ? `, steps ${formatStep(b.lost.from)}..${formatStep(b.lost.to)} are no longer on it (the journal commits again those it still holds; their numbers are not given again)` : ''}`,
    })
  if (r.committed > 0)
    lines.push({ level: 'info', line: `${ws}: committed ${r.committed} step(s) from the journal` })
  for (const w of r.waiting)
    lines.push({
      level: 'warn',
      line: `${ws}/${w.agent}: steps ${formatStep(w.from)}..${formatStep(w.to)} wait in the journal (${w.error}); they are committed once the repository can be written (holdfast recover ${ws})`,
    })
  for (const g of r.gaps)
    lines.push({
      level: 'warn',
      line: `${ws}/${g.agent}: step ${formatStep(g.n)} was recorded but its journal frame is damaged; its number is not given again, its bytes are kept aside`,
    })
  for (const d of r.damaged)
    lines.push({
      level: 'warn',
      line: `${ws}/${d.agent}: ${d.length} ${d.kind} journal bytes kept at ${d.kept}`,
    })
  for (const q of r.quarantined)
    lines.push({ level: 'warn', line: `${ws}/${q.agent}: step ${q.step} moved aside: ${q.reason}` })
  return lines
}

/** What `recoverQuarantine` committed: each entry, and the branch it went to. */
export interface Brought {
  agent: string
  n: number
  to: string
}

/**
 * Commit the whole entries an older holdfast (or a name that could not be a branch) left in
 * quarantine: each onto `agents/<agent>.recovered` (`.recovered-2`, … for a number already there),
 * its number kept, then remove the entry (it is in git). A live branch is never renumbered.
 */
export async function recoverQuarantine(ws: Workspace): Promise<{ brought: Brought[]; refused: string[] }> {
  await ws.ensure()
  const brought: Brought[] = []
  const refused: string[] = []
  const targets = new Map<string, { name: string; last: number }[]>()
  const plan: { to: string; entry: ReturnType<typeof quarantineEntries>[number] }[] = []
  for (const entry of quarantineEntries(ws)) {
    let list = targets.get(entry.agent)
    if (!list) targets.set(entry.agent, (list = []))
    let target = list.find((t) => t.last < entry.n)
    for (let k = list.length + 1; !target; k++) {
      const name = `${entry.agent}.recovered${k === 1 ? '' : `-${k}`}`
      const bad = checkName('agent', name)
      if (bad) {
        refused.push(`${entry.dir}: ${bad}`)
        break
      }
      const t = { name, last: await ws.committedSteps(name) }
      list.push(t)
      if (t.last < entry.n) target = t
    }
    if (!target) continue
    target.last = entry.n
    plan.push({ to: target.name, entry })
  }
  const byTarget = new Map<string, typeof plan>()
  for (const p of plan) byTarget.set(p.to, [...(byTarget.get(p.to) ?? []), p])
  for (const [to, items] of byTarget) {
    const steps = items.map(({ entry }) => ({
      agent: to,
      n: entry.n,
      model: modelOf(entry.files),
      files: entry.files,
    }))
    const r = await commitSteps(ws.repo, steps, ws.options)
    const err = r.failed.get(to)
    if (err) {
      refused.push(`${to}: ${err.message}`)
      continue
    }
    for (const { entry } of items) {
      fs.rmSync(entry.dir, { recursive: true, force: true })
      brought.push({ agent: entry.agent, n: entry.n, to })
    }
  }
  return { brought, refused }
}

/** The model a quarantined entry's meta names, if it can be read. */
function modelOf(files: Record<string, Buffer>): string | null {
  try {
    const meta = JSON.parse(files[META_FILE]?.toString('utf8') ?? '{}') as { route?: { model?: unknown } }
    return typeof meta.route?.model === 'string' ? meta.route.model : null
  } catch {
    return null
  }
}
