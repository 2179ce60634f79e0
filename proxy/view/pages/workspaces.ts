/**
 * `/ui/`: every workspace of the home with its agents, steps, last activity, cost, the share of
 * input read from the provider's cache, and what the hold saved. Totals are sums of the agents'
 * rows (report/agents), so this page and `holdfast agents` agree. An empty home says how to start.
 */
import { HOLD_SAVED } from '../../core/saving-words'
import { type AgentRow, workspaceAgentRows } from '../../report/agents'
import { listWorkspaces, Workspace } from '../../store/workspace'
import { fmtShare, fmtTime, fmtTokens, fmtUsd, type Html, markup } from '../html'
import type { Links } from '../links'

export interface WorkspaceRow {
  ws: string
  agents: number
  steps: number
  last: string | null
  input: number
  cache_read: number
  cache_write: number
  output: number
  cost_usd: number
  unpriced: number
  held_steps: number
  saved_usd: number
}

/** A workspace's row: the sums of its agents' rows. */
export function workspaceRow(ws: string, rows: readonly AgentRow[]): WorkspaceRow {
  const w: WorkspaceRow = {
    ws,
    agents: rows.length,
    steps: 0,
    last: null,
    input: 0,
    cache_read: 0,
    cache_write: 0,
    output: 0,
    cost_usd: 0,
    unpriced: 0,
    held_steps: 0,
    saved_usd: 0,
  }
  for (const r of rows) {
    w.steps += r.steps
    if (r.last && (w.last === null || r.last > w.last)) w.last = r.last
    w.input += r.input
    w.cache_read += r.cache_read
    w.cache_write += r.cache_write
    w.output += r.output
    w.cost_usd += r.cost_usd
    w.unpriced += r.unpriced
    w.held_steps += r.held_steps
    w.saved_usd += r.saved_usd
  }
  return w
}

/** Cache reads over all input tokens (uncached, read, written); null when there was no input. */
export function readShare(t: { input: number; cache_read: number; cache_write: number }): number | null {
  const all = t.input + t.cache_read + t.cache_write
  return all === 0 ? null : t.cache_read / all
}

export async function workspaceRows(home: string): Promise<WorkspaceRow[]> {
  const out: WorkspaceRow[] = []
  for (const name of (await listWorkspaces(home)).sort()) {
    out.push(workspaceRow(name, await workspaceAgentRows(new Workspace(home, name))))
  }
  return out
}

/** A cost with the steps no table priced said, never as $0. */
export const costText = (usd: number, unpriced: number): string =>
  unpriced > 0 ? `${fmtUsd(usd)} + ${unpriced} unpriced` : fmtUsd(usd)

export function workspacesBody(rows: readonly WorkspaceRow[], links: Links): Html {
  if (rows.length === 0) {
    return markup`<h1>Workspaces</h1>
      <p class="muted">
        No workspace yet: a workspace is created by its first request (<code
          >holdfast run --ws myproj -- claude</code
        >, or any client whose base URL is this server).
      </p>`
  }
  return markup`<h1>Workspaces</h1>
    <table id="workspaces">
      <thead>
        <tr>
          <th>workspace</th>
          <th class="n">agents</th>
          <th class="n">steps</th>
          <th>last activity</th>
          <th class="n">cost</th>
          <th class="n">cache read share</th>
          <th class="n">held steps</th>
          <th class="n">${HOLD_SAVED}</th>
        </tr>
      </thead>
      <tbody>
        ${rows.map(
          (r) =>
            markup`<tr>
              <td><a href="${links.workspace(r.ws)}">${r.ws}</a></td>
              <td class="n">${r.agents}</td>
              <td class="n">${fmtTokens(r.steps)}</td>
              <td>${fmtTime(r.last)}</td>
              <td class="n">${costText(r.cost_usd, r.unpriced)}</td>
              <td class="n">${fmtShare(readShare(r))}</td>
              <td class="n">${r.held_steps}</td>
              <td class="n">${fmtUsd(r.saved_usd)}</td>
            </tr>`,
        )}
      </tbody>
    </table>`
}
