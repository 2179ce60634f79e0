/**
 * `/ui/w/<ws>/a/<agent>`: the agent's timeline — one row per step (number, time, model, status,
 * its tokens as one stacked bar, cost, the hold's verdict, compaction, time to first byte) — a
 * chart of the same over the steps with the cumulative cost, and the agent's loaded tools. The rows
 * are report/steps' rows (report/timeline), so this page and `holdfast steps` agree. A pure renderer:
 * it reads nothing.
 */
import { CAUSE_WORDS, type Cause } from '../../core/cache-cause'
import { HOLD_SAVED, heldWords, noun, plural, reasonWords, WRITES_AVOIDED } from '../../core/saving-words'
import { type StepRow, totals, costUnknown } from '../../report/steps'
import type { AgentData, TimelineRow } from '../../report/timeline'
import { stackedBar, stepsChart, legend, tokensOf } from '../chart'
import { fmtMs, fmtShare, fmtTime, fmtTokens, fmtUsd, type Html, markup } from '../html'
import type { Links } from '../links'
import { costText, readShare } from './workspaces'

/** The hold's verdict as a tag: held (and what), or the reason it did not apply. */
export function verdict(r: Pick<StepRow, 'held' | 'hold_reason'> & { reordered?: boolean }): Html {
  if (r.reordered && r.held.length === 0)
    return markup`<span class="tag held" title="the client reordered its tools; the hold re-sent the previous order">${heldWords(r.held, true)}</span>`
  if (r.held.length)
    return markup`<span class="tag held" title="the hold re-sent the previous tools array, holding ${r.held.join(', ')}">${heldWords(r.held)}</span>`
  return markup`<span class="muted" title="${r.hold_reason ?? ''}">${reasonWords(r.hold_reason)}</span>`
}

/** The step's cause (what `holdfast why` says first), its meaning in the tooltip; a miss stands out. */
const causeCell = (cause: Cause | null): Html =>
  cause === null
    ? markup`<span class="muted">-</span>`
    : markup`<span class="${cause === 'no_miss' || cause === 'held' || cause === 'first_step' || cause === 'fork' ? 'muted' : 'bad'}" title="${CAUSE_WORDS[cause]}">${cause}</span>`

const statusCell = (r: StepRow): Html =>
  r.status !== null && r.status < 400
    ? markup`${r.status}`
    : markup`<span class="${r.status !== null || (r.outcome && r.outcome !== 'ok') ? 'bad' : ''}">${r.status ?? r.outcome ?? '-'}</span>`

/** The timeline rows' markup (a live update appends more). `max` is the widest bar's tokens. */
export function timelineRowsHtml(
  d: Pick<AgentData, 'ws' | 'agent'>,
  rows: readonly TimelineRow[],
  max: number,
  links: Links,
): Html {
  return markup`${rows.map(
    (r) =>
      markup`<tr id="s${r.step}">
        <td><a href="${links.step(d.ws, d.agent, r.n)}">${r.step}</a></td>
        <td>${fmtTime(r.time)}</td>
        <td>${r.model ?? '-'}</td>
        <td>${statusCell(r)}</td>
        <td>${stackedBar(r, max)}</td>
        <td class="n">${fmtTokens(r.input)}</td>
        <td class="n">${fmtTokens(r.cache_read)}</td>
        <td class="n">${fmtTokens(r.cache_write)}</td>
        <td class="n">${fmtTokens(r.output)}</td>
        <td class="n">${costUnknown(r) ? 'unpriced' : fmtUsd(r.cost_usd)}</td>
        <td>${verdict(r)}</td>
        <td>${causeCell(r.cause)}</td>
        <td>${r.compaction ? markup`<span class="tag">${r.compaction === 'request' ? 'compaction' : 'compacted'}</span>` : ''}</td>
        <td class="n">${fmtMs(r.ttfb_ms)}</td>
        <td class="muted">${r.state === 'pending' ? 'pending' : ''}</td>
      </tr>`,
  )}`
}

/** The bar scale: the largest step's tokens, rounded up so a live row rarely outgrows it. */
export const barMax = (rows: readonly TimelineRow[]): number => {
  const m = Math.max(1, ...rows.map(tokensOf))
  const p = 10 ** Math.floor(Math.log10(m))
  return Math.ceil(m / p) * p
}

/** The summary cards and the chart (replaced whole by a live update). */
export function agentSummary(d: AgentData): Html {
  const t = totals(d.rows)
  const heldRows = d.rows.filter((r) => r.held.length > 0 || r.reordered)
  const held = heldRows.length
  const avoided = heldRows.reduce((a, r) => a + (r.cache_read ?? 0), 0)
  return markup`<div class="cards">
      <div class="card"><b>${d.rows.length}</b><span>${noun(d.rows.length, 'step')}</span></div>
      <div class="card"><b>${costText(t.cost_usd, t.unpriced)}</b><span>cost</span></div>
      <div class="card"><b>${fmtShare(readShare(t))}</b><span>cache read share</span></div>
      <div class="card"><b>${fmtTokens(t.cache_write)}</b><span>cache write tokens</span></div>
      <div class="card"><b>${fmtUsd(t.saved_usd)}</b><span>${HOLD_SAVED} (${plural(held, 'held step')}, ${fmtTokens(avoided)} ${WRITES_AVOIDED})</span></div>
    </div>
    ${stepsChart(d.rows)}${legend(true)}`
}

export function agentBody(d: AgentData, links: Links): Html {
  const max = barMax(d.rows)
  return markup`<h1>Agent ${d.agent} <span class="muted">in ${d.ws}</span></h1>
    <div id="agent-summary">${agentSummary(d)}</div>
    <h2>Steps</h2>
    <table class="timeline" data-bar-max="${max}">
      <thead>
        <tr>
          <th>NNN</th>
          <th>time</th>
          <th>model</th>
          <th>status</th>
          <th>tokens</th>
          <th class="n">input</th>
          <th class="n">cache read</th>
          <th class="n">cache write</th>
          <th class="n">output</th>
          <th class="n">cost</th>
          <th>hold</th>
          <th>cache</th>
          <th></th>
          <th class="n">ttfb</th>
          <th></th>
        </tr>
      </thead>
      <tbody id="agent-steps">
        ${timelineRowsHtml(d, d.rows, max, links)}
      </tbody>
    </table>
    <h2>Loaded tools</h2>
    ${
      d.tools.length === 0
        ? markup`<p class="muted">
            No loaded tools (<code>holdfast clients load ${d.ws} ${d.agent} &lt;client&gt; &lt;tool&gt;…</code
            >).
          </p>`
        : markup`<table>
            <thead>
              <tr>
                <th>presented name</th>
                <th>client</th>
                <th>description</th>
              </tr>
            </thead>
            <tbody>
              ${d.tools.map(
                (t) =>
                  markup`<tr>
                    <td class="mono">${t.presented}</td>
                    <td>${t.client}</td>
                    <td class="muted">${t.description.slice(0, 160)}</td>
                  </tr>`,
              )}
            </tbody>
          </table>`
    }`
}
