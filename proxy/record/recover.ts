/**
 * Recovery at start: every journal step not yet on its agent's branch is finished from what
 * reached the journal and committed, as one pack, before the first new request. An answer whose
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
import { completeFinish } from './finish'
import {
  completeRecordMeta,
  finishRecord,
  journalAgents,
  journalSteps,
  PART_FILE,
  pruneJournal,
  readResponseHead,
  RESPONSE_FILES,
  type StepMeta,
} from './journal'
import { headerText, recordedResponseHeaders } from './meta'

/** A journal entry recovery moved aside, and why. */
export interface Quarantined {
  agent: string
  step: string
  reason: string
}

/**
 * Move a journal entry that cannot be committed to `<home>/quarantine/<ws>/<agent>/<NNN>/` with
 * a `reason.txt`, so `serve` starts; a second entry of the same number gets `<NNN>.2`, `.3`, ….
 */
function quarantine(ws: Workspace, agent: string, entry: string, reason: string): Quarantined {
  const base = path.join(homePaths.quarantine(ws.home), ws.name, agent)
  fs.mkdirSync(base, { recursive: true })
  let target = path.join(base, entry)
  for (let k = 2; fs.existsSync(target); k++) target = path.join(base, `${entry}.${k}`)
  const from = path.join(ws.journalDir, agent, entry)
  try {
    fs.renameSync(from, target)
  } catch {
    fs.cpSync(from, target, { recursive: true })
    fs.rmSync(from, { recursive: true, force: true })
  }
  fs.writeFileSync(path.join(target, 'reason.txt'), `${new Date().toISOString()} ${reason}\n`)
  return { agent, step: entry, reason }
}

/**
 * Finish the record of a step a crash left unfinished, from what reached the journal: an answer
 * whose completion marker was written is finished as the worker would have (it was delivered);
 * one cut off is `interrupted`, its bytes kept as `response.txt`; none at all was never sent.
 */
function finishUnfinished(dir: string, meta: StepMeta, prices: HoldfastConfig['prices']): void {
  const part = path.join(dir, PART_FILE)
  const head = readResponseHead(dir)
  const partSize = fs.statSync(part, { throwIfNoEntry: false })?.size
  // A response file: written (atomically) or renamed from the part by a finish cut short.
  const written = RESPONSE_FILES.find((f) => fs.existsSync(path.join(dir, f)))
  if (head && (partSize === head.bytes || (partSize === undefined && written))) {
    const fromPart = partSize === head.bytes
    completeFinish({
      dir,
      dialect: meta.dialect,
      meta: {
        ...meta,
        ended_at: head.ended_at,
        ttfb_ms: head.ttfb_ms,
        total_ms: head.total_ms,
        status: head.status,
        outcome: head.status >= 400 ? 'upstream_error' : 'ok',
        response_headers: recordedResponseHeaders(head.headers),
        error: null,
      },
      // The part holds the provider's bytes; a response file already holds them decoded.
      body: fromPart ? null : fs.readFileSync(path.join(dir, written as string)),
      streamed: fromPart,
      contentType: headerText(head.headers['content-type']),
      contentEncoding: fromPart ? headerText(head.headers['content-encoding']) : '',
      holdApplied: meta.hold.applied,
      prices,
    })
    return
  }
  const cutOff = written === undefined && partSize !== undefined && partSize > 0
  if (cutOff) fs.renameSync(part, path.join(dir, 'response.txt'))
  const sent = partSize !== undefined || written !== undefined
  finishRecord(dir, undefined, {
    ...meta,
    ended_at: new Date().toISOString(),
    status: null,
    outcome: sent ? 'interrupted' : 'not_sent',
    response_file: written ?? (cutOff ? 'response.txt' : null),
    usage: null,
    cost: null,
    stop_reason: null,
    error: sent
      ? {
          code: 'INTERRUPTED',
          message: cutOff
            ? `holdfast stopped after ${partSize} bytes of the answer (kept raw in response.txt); recovered at the next start`
            : 'holdfast stopped before this step finished; recovered at the next start',
        }
      : {
          code: 'NOT_SENT',
          message:
            'holdfast stopped after recording this step and before sending it; the provider never saw it',
        },
  })
}

/**
 * Commit every journal step of this workspace that is not on its agent's branch yet, as one pack.
 * An entry that cannot be committed is quarantined (with every later step of its agent, so no
 * branch gets a gap): recovery never stops `serve`.
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
  for (const agent of await journalAgents(ws.journalDir)) {
    const agentDir = path.join(ws.journalDir, agent)
    const entries = await journalSteps(agentDir)
    const badName = checkName('agent', agent)
    if (badName) {
      for (const n of entries) quarantined.push(quarantine(ws, agent, formatStep(n), badName))
      try {
        fs.rmdirSync(agentDir) // gone when nothing else was in it
      } catch {
        // something else is in it: left as it is
      }
      continue
    }
    const committed = await ws.committedSteps(agent)
    const pending: StepToCommit[] = []
    let fault: string | undefined
    for (const n of entries) {
      if (n <= committed) continue
      const dir = ws.stepDir(agent, n)
      if (fault !== undefined) {
        quarantined.push(
          quarantine(ws, agent, formatStep(n), `after an earlier step that could not be committed: ${fault}`),
        )
        continue
      }
      try {
        const meta = completeRecordMeta(dir)
        if (!meta) {
          // The record never completed (no request.json, or a short one), so nothing was sent.
          await fsp.rm(dir, { recursive: true, force: true })
          continue
        }
        if (meta.ended_at === undefined) finishUnfinished(dir, meta, prices)
        pending.push({ agent, n, model: meta.route.model })
      } catch (err) {
        fault = `step ${formatStep(n)} cannot be finished: ${(err as Error).message}`
        quarantined.push(quarantine(ws, agent, formatStep(n), fault))
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
        quarantined.push(quarantine(ws, agent, formatStep(s.n), `its commit failed: ${err.message}`))
      continue
    }
    committedCount += steps.length
    for (const s of steps)
      log.info({ ws: ws.name, agent, step: formatStep(s.n) }, 'recovered an uncommitted step')
  }
  // Also drops what the commit worker had not pruned yet when the last serve stopped.
  for (const agent of await journalAgents(ws.journalDir)) {
    if (checkName('agent', agent) === undefined) {
      await pruneJournal(ws.agentJournal(agent), await ws.committedSteps(agent))
    }
  }
  return { committed: committedCount, quarantined }
}
