/**
 * A cohort, derived: the attempts hanging on one notch are the agent branches whose own
 * `dispatch: <role> [<child>]` commit has the notch as its parent. Nothing else records that they
 * belong together (no registry). Each member is read from its first step's record.
 */
import { isObject, type Json } from '../../proxy/core/json'
import { rebuildReply } from '../../proxy/core/reply'
import type { StepMeta } from '../../generated/meta'
import { readCommitInfo } from '../../proxy/store/git'
import { listRefs } from '../../proxy/store/git-refs'
import { resolveNotch, stepOfMessage } from '../../proxy/store/notch'
import { readStepMeta, readStepResponse } from '../../proxy/store/records'
import type { Workspace } from '../../proxy/store/workspace'

const DISPATCH_MESSAGE = /^dispatch: (\S+) \[([^\]]+)\]\s*$/

export interface Member {
  child: string
  role: string
  dispatchCommit: string
  meta: StepMeta | undefined
  answer: string | undefined
}

/** The text of an assistant turn, for people: text blocks joined, tool calls named. */
export function answerText(message: Json | undefined): string | undefined {
  if (!isObject(message)) return undefined
  if (typeof message.content === 'string') return message.content
  const parts: string[] = []
  for (const b of Array.isArray(message.content) ? message.content : []) {
    if (isObject(b) && b.type === 'text' && typeof b.text === 'string') parts.push(b.text)
    if (isObject(b) && b.type === 'tool_use') parts.push(`[calls ${String(b.name)}]`)
  }
  for (const c of Array.isArray(message.tool_calls) ? message.tool_calls : []) {
    if (isObject(c) && isObject(c.function)) parts.push(`[calls ${String(c.function.name)}]`)
  }
  return parts.join('\n')
}

/** The dispatch commit that starts `agent`'s own history, if the branch was dispatched. */
async function dispatchOf(
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
    if (stepOfMessage(first)?.agent !== agent) return undefined
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
  for (const { ref, oid } of await listRefs(ws.repo, 'refs/heads/agents/')) {
    const agent = ref.slice('refs/heads/agents/'.length)
    const d = await dispatchOf(ws, agent, oid)
    if (!d || d.parent !== notch.commit) continue
    const meta = await readStepMeta(ws, agent, 1)
    const response = meta ? await readStepResponse(ws, agent, 1) : undefined
    const reply =
      response && meta
        ? rebuildReply(meta.dialect, response.bytes, response.file === 'response.sse')
        : undefined
    members.push({
      child: agent,
      role: d.role,
      dispatchCommit: d.commit,
      meta,
      answer: answerText(reply?.message),
    })
  }
  members.sort((a, b) => (a.child < b.child ? -1 : 1))
  return { notch: notch.commit, members }
}
