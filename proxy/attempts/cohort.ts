/**
 * A cohort, derived: the attempts hanging on one notch are the agent branches whose own
 * `dispatch: <role> [<child>]` commit has the notch as its parent. Nothing else records that they
 * belong together (no registry). Each member is read from its first step's record.
 */
import { dialectByName } from '../dialects'
import type { StepMeta } from '../../generated/meta'
import { listRefs, readCommitInfo, resolveNotch } from '../store/git'
import { AGENTS_PREFIX, stepOfSubject } from '../core/layout'
import { readStepMeta, readStepResponse } from '../record/read'
import type { Workspace } from '../store/workspace'

const DISPATCH_MESSAGE = /^dispatch: (\S+) \[([^\]]+)\]\s*$/

export interface Member {
  child: string
  role: string
  dispatchCommit: string
  meta: StepMeta | undefined
  answer: string | undefined
}

/** The dispatch commit that starts `agent`'s own history, if the branch was dispatched. */
export async function dispatchOf(
  ws: Workspace,
  agent: string,
  tip: string,
): Promise<{ commit: string; role: string; parent: string } | undefined> {
  let oid: string | undefined = tip
  while (oid) {
    const info = await readCommitInfo(ws.repo, oid)
    const first = info.message.split('\n')[0] ?? ''
    const d = DISPATCH_MESSAGE.exec(first)
    if (d)
      return d[2] === agent && info.parents[0]
        ? { commit: oid, role: d[1] as string, parent: info.parents[0] }
        : undefined
    if (stepOfSubject(first)?.agent !== agent) return undefined
    oid = info.parents[0]
  }
  return undefined
}

export async function cohortOf(
  ws: Workspace,
  notchRef: string,
): Promise<{ notch: string; members: Member[] }> {
  const notch = await resolveNotch(ws.repo, notchRef)
  const members: Member[] = []
  for (const { ref, oid } of await listRefs(ws.repo, AGENTS_PREFIX)) {
    const agent = ref.slice(AGENTS_PREFIX.length)
    const d = await dispatchOf(ws, agent, oid)
    if (!d || d.parent !== notch.commit) continue
    const meta = await readStepMeta(ws, agent, 1)
    const response = meta ? await readStepResponse(ws, agent, 1) : undefined
    const reply =
      response && meta
        ? dialectByName(meta.dialect).rebuildReply(response.bytes, response.file === 'response.sse')
        : undefined
    members.push({
      child: agent,
      role: d.role,
      dispatchCommit: d.commit,
      meta,
      answer: reply?.text,
    })
  }
  members.sort((a, b) => (a.child < b.child ? -1 : 1))
  return { notch: notch.commit, members }
}
