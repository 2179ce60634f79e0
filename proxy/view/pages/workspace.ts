/**
 * `/ui/w/<ws>`: the agents of a workspace as a tree — main chains at the root, sessions, subagents
 * and side requests under the agent they were split from, attempts under the agent of their notch
 * (with a link to the notch's cohort) — each with its steps, tokens, cache reads and writes, cost,
 * held steps and what the hold saved (report/agent-tree's tree). An agent whose parent has no steps
 * is shown at the root. A pure renderer: it reads nothing.
 */
import { HOLD_SAVED, noun, plural } from '../../core/saving-words'
import type { TreeNode, WorkspaceData } from '../../report/agent-tree'
import { workspaceRow } from '../../report/agents'
import { fmtTime, fmtTokens, fmtUsd, type Html, markup } from '../html'
import type { Links } from '../links'
import { costText, readShare } from './workspaces'
import { fmtShare } from '../html'

function kindCell(n: TreeNode, ws: string, links: Links): Html {
  const a = n.attempt
  if (a) {
    return a.step
      ? markup`<span class="tag">attempt</span> ${a.role} from
          <a href="${links.cohort(ws, a.step.agent, a.step.n)}">${a.step.agent}@${a.step.name}</a>`
      : markup`<span class="tag">attempt</span> ${a.role} (clean start)`
  }
  return n.row.kind === 'main'
    ? markup`<span class="muted">main</span>`
    : markup`<span class="tag">${n.row.kind}</span>`
}

/** The tree's table body (replaced whole by a live update). */
export function treeRows(d: WorkspaceData, links: Links): Html {
  return markup`${d.nodes.map((n) => {
    const r = n.row
    return markup`<tr data-agent="${r.agent}">
      <td class="name">
        <span class="indent">${'\u2003'.repeat(n.depth)}${n.depth ? '└ ' : ''}</span
        ><a href="${links.agent(d.ws, r.agent)}">${r.agent}</a>
      </td>
      <td>${kindCell(n, d.ws, links)}</td>
      <td class="n">${r.steps}</td>
      <td>${r.models.join(', ')}</td>
      <td class="n">${fmtTokens(r.input)}</td>
      <td class="n">${fmtTokens(r.cache_read)}</td>
      <td class="n">${fmtTokens(r.cache_write)}</td>
      <td class="n">${fmtTokens(r.output)}</td>
      <td class="n">${costText(r.cost_usd, r.unpriced)}</td>
      <td class="n">${r.held_steps}</td>
      <td class="n">${fmtUsd(r.saved_usd)}</td>
      <td>${fmtTime(r.last)}</td>
    </tr>`
  })}`
}

/** The summary cards (replaced whole by a live update). */
export function workspaceCards(d: WorkspaceData): Html {
  const w = workspaceRow(d.ws, d.rows)
  return markup`<div class="card"><b>${w.agents}</b><span>${noun(w.agents, 'agent')}</span></div>
    <div class="card"><b>${fmtTokens(w.steps)}</b><span>${noun(w.steps, 'step')}</span></div>
    <div class="card"><b>${costText(w.cost_usd, w.unpriced)}</b><span>cost</span></div>
    <div class="card"><b>${fmtShare(readShare(w))}</b><span>cache read share</span></div>
    <div class="card"><b>${fmtUsd(w.saved_usd)}</b><span>${HOLD_SAVED} (${plural(w.held_steps, 'held step')})</span></div>`
}

export function workspaceBody(d: WorkspaceData, links: Links): Html {
  return markup`<h1>Workspace ${d.ws}</h1>
    <div class="cards" id="ws-cards">${workspaceCards(d)}</div>
    ${
      d.rows.length === 0
        ? markup`<p class="muted">No agent of ${d.ws} has steps yet.</p>`
        : markup`<table class="tree">
            <thead>
              <tr>
                <th>agent</th>
                <th>kind</th>
                <th class="n">steps</th>
                <th>models</th>
                <th class="n">input</th>
                <th class="n">cache read</th>
                <th class="n">cache write</th>
                <th class="n">output</th>
                <th class="n">cost</th>
                <th class="n">held</th>
                <th class="n">${HOLD_SAVED}</th>
                <th>last</th>
              </tr>
            </thead>
            <tbody id="ws-tree">
              ${treeRows(d, links)}
            </tbody>
          </table>`
    }`
}
