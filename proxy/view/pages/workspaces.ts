/**
 * `/ui/`: every workspace of the home with its agents, steps, last activity, cost, the share of
 * input read from the provider's cache, and what the hold saved. Totals are sums of the agents'
 * rows (report/agents), so this page and `holdfast agents` agree. An empty home says how to start.
 * A pure renderer: it reads nothing.
 */
import { HOLD_SAVED } from '../../core/saving-words'
import type { WorkspaceRow } from '../../report/agents'
import { fmtShare, fmtTime, fmtTokens, fmtUsd, type Html, markup } from '../html'
import type { Links } from '../links'

/** Cache reads over all input tokens (uncached, read, written); null when there was no input. */
export function readShare(t: { input: number; cache_read: number; cache_write: number }): number | null {
  const all = t.input + t.cache_read + t.cache_write
  return all === 0 ? null : t.cache_read / all
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
