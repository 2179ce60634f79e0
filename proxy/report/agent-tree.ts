/**
 * A workspace's agents as a tree (the view's workspace page and its export): main chains at the
 * root, sessions, subagents and side requests under the agent they were split from, attempts under
 * the agent of their notch — each with its report/agents row. Invariant: an agent whose parent has
 * no steps is at the root, and no agent is ever left out (a cycle cannot come from names and
 * notches, but it would not lose one either).
 */
import type { Workspace } from '../store/workspace'
import { type AgentRow, type AttemptOrigin, attemptOrigin, workspaceAgentRows } from './agents'

export interface TreeNode {
  row: AgentRow
  attempt: AttemptOrigin | undefined
  depth: number
}

export interface WorkspaceData {
  ws: string
  nodes: TreeNode[]
  rows: AgentRow[]
}

/** The agents in tree order (depth first, children by name), each with its depth. */
export function agentTree(
  rows: readonly AgentRow[],
  attempts: ReadonlyMap<string, AttemptOrigin>,
): TreeNode[] {
  const names = new Set(rows.map((r) => r.agent))
  const parentOf = (r: AgentRow): string | null => {
    const p = attempts.get(r.agent)?.step?.agent ?? r.parent
    return p !== null && names.has(p) && p !== r.agent ? p : null
  }
  const children = new Map<string | null, AgentRow[]>()
  for (const r of rows) children.set(parentOf(r), [...(children.get(parentOf(r)) ?? []), r])
  const out: TreeNode[] = []
  const seen = new Set<string>()
  const walk = (parent: string | null, depth: number): void => {
    for (const r of (children.get(parent) ?? []).sort((a, b) => (a.agent < b.agent ? -1 : 1))) {
      if (seen.has(r.agent)) continue
      seen.add(r.agent)
      out.push({ row: r, attempt: attempts.get(r.agent), depth })
      walk(r.agent, depth + 1)
    }
  }
  walk(null, 0)
  // A cycle cannot come from names and notches, but nothing is ever left out.
  for (const r of rows) if (!seen.has(r.agent)) out.push({ row: r, attempt: attempts.get(r.agent), depth: 0 })
  return out
}

export async function workspaceData(ws: Workspace): Promise<WorkspaceData> {
  const rows = await workspaceAgentRows(ws)
  const attempts = new Map<string, AttemptOrigin>()
  for (const r of rows) {
    const a = await attemptOrigin(ws, r.agent)
    if (a) attempts.set(r.agent, a)
  }
  return { ws: ws.name, rows, nodes: agentTree(rows, attempts) }
}
