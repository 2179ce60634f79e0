/**
 * How far an agent's numbering went, by what survives outside its branch: the remote was told of
 * steps (`remote/push.json`), the remote's copy as last fetched (its tip's subject), the branch's
 * reflog, the journal's file names (a file is named by the first step it took). A cut with
 * `journal.fsync: false` may take the branch and some of these; whatever one of them says was
 * given is never given again. Reads only; no network.
 */
import { agentRef } from '../core/layout'
import { formatStep } from '../core/naming'
import { segmentFiles } from '../record/journal/reader'
import { remoteHighest } from '../remote/heal'
import { readPushState } from '../remote/state'
import { highestInReflog } from '../store/git'
import type { Workspace } from '../store/workspace'

/** The highest step number given by what survives, and each witness that names it. */
export interface Told {
  n: number
  /** What says so, as phrases ("the remote was told of step 018", …). */
  by: string[]
}

/** What outside `agent`'s branch says of how far its numbering went (`journalDir`: its journal). */
export async function highestTold(ws: Workspace, agent: string, journalDir: string): Promise<Told> {
  const said: [number, string][] = [
    [readPushState(ws.home, ws.name)?.agents[agent]?.step ?? 0, 'the remote was told of step'],
    [await remoteHighest(ws, agent), "the remote's copy, as last fetched, ends at step"],
    [highestInReflog(ws.repo.gitdir, agentRef(agent)), "the branch's reflog names step"],
    [Math.max(0, ...segmentFiles(journalDir).map((s) => s.first)), 'a journal file is named after step'],
  ]
  const n = Math.max(...said.map(([k]) => k))
  return { n, by: said.filter(([k]) => k === n && n > 0).map(([k, what]) => `${what} ${formatStep(k)}`) }
}
