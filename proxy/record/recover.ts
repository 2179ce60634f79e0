/**
 * Recovery at start: every journal step not yet on its agent's branch is finished from what
 * reached the journal and committed, as one pack, before the first new request; then the journal
 * files are removed (a new serve starts with an empty journal). An answer whose
 * completion marker was written is finished as the worker would have (it was delivered); one cut
 * off is `interrupted`, its bytes kept as `response.txt`; a step recorded but never sent is
 * `not_sent`. Invariant: recovery never stops `serve`: an entry that cannot be committed is moved
 * to `<home>/quarantine/<ws>/<agent>/<NNN>/` with a `reason.txt` (with every later step of its
 * agent, so no branch gets a gap).
 */
import fs from 'node:fs'
import fsp from 'node:fs/promises'
import path from 'node:path'
import { checkName, formatStep } from '../core/naming'
import type { HoldfastConfig } from '../store/config'
import { homePaths } from '../store/home'
import type { StepToCommit } from '../store/step-commits'
import type { Workspace } from '../store/workspace'
import type { Logger } from '../log'
import { answerBytes, finishStep } from './finish'
import { journalAgents, type JournalStep, readJournal } from './journal-read'
import { META_FILE, metaBytes, REQUEST_FILE } from './layout'
import type { StepMeta } from './meta'
import { journalFiles } from './read'

/** A journal entry recovery moved aside, and why. */
export interface Quarantined {
  agent: string
  step: string
  reason: string
}

/**
 * Write a journal step that cannot be committed to `<home>/quarantine/<ws>/<agent>/<NNN>/` (its
 * files as the journal holds them) with a `reason.txt`, so `serve` starts; a second entry of the
 * same number gets `<NNN>.2`, `.3`, ….
 */
function quarantine(
  ws: Workspace,
  agent: string,
  n: number,
  step: JournalStep | undefined,
  reason: string,
): Quarantined {
  const entry = formatStep(n)
  const base = path.join(homePaths.quarantine(ws.home), ws.name, agent)
  fs.mkdirSync(base, { recursive: true })
  let target = path.join(base, entry)
  for (let k = 2; fs.existsSync(target); k++) target = path.join(base, `${entry}.${k}`)
  fs.mkdirSync(target)
  for (const [name, bytes] of Object.entries(step ? journalFiles(step) : {}))
    fs.writeFileSync(path.join(target, name), bytes)
  fs.writeFileSync(path.join(target, 'reason.txt'), `${new Date().toISOString()} ${reason}\n`)
  return { agent, step: entry, reason }
}

/**
 * The finished record of a step a crash left uncommitted, from what reached the journal: an answer
 * whose completion marker was written is finished as the worker would have (it was delivered); one
 * cut off is `interrupted`, its bytes kept as `response.txt`; a step never sent is `not_sent`.
 */
function finishUnfinished(step: JournalStep, prices: HoldfastConfig['prices']): Record<string, Buffer> {
  const { meta, head, answer } = step
  const request = { [REQUEST_FILE]: step.request }
  if (head && answer.length === head.bytes) {
    const finished = finishStep({
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
      prices,
    })
    const files: Record<string, Buffer> = { ...request, [META_FILE]: metaBytes(finished.meta) }
    if (finished.response) files[finished.response.file] = answerBytes(finished.response.bytes)
    return files
  }
  const cutOff = answer.length > 0
  const done: StepMeta = {
    ...meta,
    ended_at: new Date().toISOString(),
    status: null,
    outcome: step.sent ? 'interrupted' : 'not_sent',
    response_file: cutOff ? 'response.txt' : null,
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
  return { ...request, [META_FILE]: metaBytes(done), ...(cutOff ? { 'response.txt': answer } : {}) }
}

/**
 * Commit every journal step of this workspace that is not on its agent's branch yet, as one pack,
 * then remove the journal files. An entry that cannot be committed is quarantined (with every later
 * step of its agent, so no branch gets a gap): recovery never stops `serve`.
 */
export async function recoverWorkspace(
  ws: Workspace,
  log: Logger,
  prices?: HoldfastConfig['prices'],
): Promise<{ committed: number; quarantined: Quarantined[] }> {
  await ws.ensure()
  await ws.clearStaleLocks()
  const quarantined: Quarantined[] = []
  const pendingByAgent = new Map<string, StepToCommit[]>()
  const journals = new Map<string, Map<number, JournalStep>>()
  for (const agent of journalAgents(ws.journalDir)) {
    const dir = path.join(ws.journalDir, agent)
    const badName = checkName('agent', agent)
    let steps: Map<number, JournalStep>
    try {
      steps = readJournal(dir).steps
    } catch (err) {
      quarantined.push(
        quarantine(ws, agent, 0, undefined, `its journal cannot be read: ${(err as Error).message}`),
      )
      continue
    }
    journals.set(agent, steps)
    if (badName) {
      for (const [n, s] of steps) quarantined.push(quarantine(ws, agent, n, s, badName))
      continue
    }
    const committed = await ws.committedSteps(agent)
    const pending: StepToCommit[] = []
    let fault: string | undefined
    for (const [n, s] of steps) {
      if (n <= committed) continue
      if (fault !== undefined) {
        quarantined.push(
          quarantine(ws, agent, n, s, `after an earlier step that could not be committed: ${fault}`),
        )
        continue
      }
      try {
        pending.push({ agent, n, model: s.meta.route.model, files: finishUnfinished(s, prices) })
      } catch (err) {
        fault = `step ${formatStep(n)} cannot be finished: ${(err as Error).message}`
        quarantined.push(quarantine(ws, agent, n, s, fault))
      }
    }
    if (pending.length > 0) pendingByAgent.set(agent, pending)
  }
  const all = [...pendingByAgent.values()].flat()
  let failed: Map<string, Error>
  try {
    failed = (await ws.commitSteps(all)).failed
  } catch {
    // One agent's entry spoiled the shared pack: commit agent by agent to find it.
    failed = new Map()
    for (const [agent, steps] of pendingByAgent) {
      try {
        const r = await ws.commitSteps(steps)
        for (const [a, e] of r.failed) failed.set(a, e)
      } catch (err) {
        failed.set(agent, err instanceof Error ? err : new Error(String(err)))
      }
    }
  }
  let committedCount = 0
  for (const [agent, steps] of pendingByAgent) {
    const err = failed.get(agent)
    if (err) {
      // Nothing of this agent moved: every pending step goes aside, numbering resumes after the branch.
      for (const s of steps)
        quarantined.push(
          quarantine(ws, agent, s.n, journals.get(agent)?.get(s.n), `its commit failed: ${err.message}`),
        )
      continue
    }
    committedCount += steps.length
    for (const s of steps)
      log.info({ ws: ws.name, agent, step: formatStep(s.n) }, 'recovered an uncommitted step')
  }
  // Everything is on a branch or in quarantine now: the journal starts empty.
  for (const agent of journals.keys())
    await fsp.rm(path.join(ws.journalDir, agent), { recursive: true, force: true })
  return { committed: committedCount, quarantined }
}
