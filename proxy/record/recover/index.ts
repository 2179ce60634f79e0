/**
 * Recovery: every journal step not yet on its agent's branch is finished from what reached the
 * journal (recover/unfinished) and committed, in step order, after what a power cut left
 * half-written in the repository is set aside and the pack files no index names (what a kill left
 * of a pack's write or removal) are removed (store/git/check). Invariant: nothing
 * answered is ever deleted: a journal file goes only once every step in it is on its branch;
 * steps that cannot be committed now (a read-only or full disk) stay in the journal with their
 * numbers and are committed later (the serve's commit worker, or `holdfast recover`); bytes no
 * whole frame accounts for are copied aside byte for byte to
 * `<home>/quarantine/<ws>/<agent>/damaged/` and reported; a number given out is never given again.
 * Recovery never stops `serve`.
 */
import fs from 'node:fs'
import path from 'node:path'
import { AGENTS_PREFIX } from '../../core/layout'
import { checkName, formatStep } from '../../core/naming'
import type { HoldfastConfig } from '../../store/config'
import { checkPacks, checkRefs, checkTips, removeOrphans } from '../../store/git'
import type { Workspace } from '../../store/workspace'
import type { Logger } from '../../process/log'
import { type CommitJob, recordFiles } from '../commit/job'
import { commitSteps, type StepToCommit } from '../commit/step-commits'
import type { Finished } from '../finish'
import { journalAgents, type JournalRead, readJournal } from '../journal/reader'
import { keepDamage, quarantineAgent, reserveLost } from './quarantine'
import type { Recovery } from './report'
import { gapsOf, pendingJobs } from './unfinished'

export { type Brought, recoverQuarantine } from './bring-back'
export type { KeptDamage, Quarantined } from './quarantine'
export { describeRecovery, type Recovery, type Waiting } from './report'
export { finishUnfinished, gapsOf, pendingJobs } from './unfinished'

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
  /** Run once the repository is checked, before any journal step is read or committed (serve: the remote's heal). */
  beforeCommit?: () => Promise<void>,
): Promise<Recovery> {
  // Before anything reads a ref or an object: what a power cut left half-written is set aside.
  const aside = path.join(path.dirname(ws.repo.gitdir), 'damaged')
  const refs = fs.existsSync(ws.repo.gitdir) ? checkRefs(ws.repo.gitdir, path.join(aside, 'refs')) : []
  const packs = checkPacks(ws.repo.gitdir, path.join(aside, 'packs'))
  // What a kill left of a pack's write or removal, before the first pack of this start is written.
  const orphans = removeOrphans(ws.repo.gitdir)
  await ws.ensure()
  await ws.clearStaleLocks()
  const rewound = await checkTips(ws.repo, path.join(aside, 'refs'))
  for (const r of rewound) {
    const agent = r.ref.slice(AGENTS_PREFIX.length)
    if (r.lost) reserveLost(ws, agent, r.lost.from, r.lost.to, r.reason)
  }
  await beforeCommit?.()
  const out: Recovery = {
    refs,
    packs,
    orphans,
    rewound,
    committed: 0,
    waiting: [],
    damaged: [],
    gaps: [],
    unrecorded: [],
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
    // Numbers lost bytes may have held (a zeroed tail, an empty file): reserved before the journal goes.
    for (const u of read.unrecorded) {
      const from = Math.max(u.from, committed + 1)
      if (u.to < from || [...read.steps.keys()].some((n) => n >= from && n <= u.to)) continue
      const why = `the journal file ${path.basename(u.file)} lost the bytes that may have held steps ${formatStep(from)}..${formatStep(u.to)} (zeroed or cut by a power cut or a crash); their numbers are not given again`
      out.unrecorded.push({ agent, from, to: u.to, kept: reserveLost(ws, agent, from, u.to, why) })
    }
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
