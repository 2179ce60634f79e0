/**
 * `/ui/w/<ws>/cohort/<agent>@<NNN>`: the attempts fired from one notch, side by side — role,
 * model, answer, tokens, cache reads and writes, cost, time — as report/cohort derives them (the
 * same rows as `holdfast cohort`). A member still waiting for its answer is shown as waiting; a
 * live update fills it in. Refusals of a Fork from here that just fired are said above. A pure
 * renderer of report/cohort's data: it reads nothing.
 */
import { formatStep } from '../../core/naming'
import type { CohortData } from '../../report/cohort'
import { fmtMs, fmtTokens, fmtUsd, type Html, markup } from '../html'
import type { Links } from '../links'
import { textHtml } from '../transcript'

/** The members (replaced whole by a live update). */
export function cohortMembers(d: CohortData, links: Links): Html {
  const members = d.report.members
  if (members.length === 0) return markup`<p class="muted">No attempt hangs on this step yet.</p>`
  return markup`${members.map((m) => {
    const u = m.usage
    const waiting = m.outcome === null
    return markup`<div class="member" data-child="${m.child}">
      <h3>${m.role} <span class="muted">· ${m.model ?? 'model pending'}</span></h3>
      <p>
        <a href="${links.agent(d.ws, m.child)}">${m.child}</a
        >${m.stop_reason ? markup` · ${m.stop_reason}` : ''}${m.status !== null && m.status >= 400 ? markup` · <span class="bad">${m.status}</span>` : ''}
      </p>
      <table>
        <tbody>
          <tr>
            <td>input</td>
            <td class="n">${fmtTokens(u?.input_tokens)}</td>
            <td>cache read</td>
            <td class="n">${fmtTokens(u?.cache_read_tokens)}</td>
          </tr>
          <tr>
            <td>output</td>
            <td class="n">${fmtTokens(u?.output_tokens)}</td>
            <td>cache write</td>
            <td class="n">${fmtTokens(u?.cache_write_tokens)}</td>
          </tr>
          <tr>
            <td>cost</td>
            <td class="n">${fmtUsd(m.cost_usd)}</td>
            <td>time</td>
            <td class="n">${fmtMs(m.total_ms)}</td>
          </tr>
        </tbody>
      </table>
      ${waiting ? markup`<p class="muted answer">waiting for the answer…</p>` : m.answer !== null ? markup`<div class="answer">${textHtml(m.answer)}</div>` : markup`<p class="muted">(no answer)</p>`}
    </div>`
  })}`
}

export function cohortBody(d: CohortData, links: Links, notice?: Html): Html {
  const notch = `${d.agent}@${formatStep(d.n)}`
  return markup`<h1>Cohort of <a href="${links.step(d.ws, d.agent, d.n)}">${notch}</a></h1>
    <p class="muted">
      Notch commit <code>${d.report.notch.slice(0, 12)}</code>; the same as
      <code>holdfast cohort ${d.ws} ${notch}</code>.
    </p>
    ${notice ?? ''}
    <div class="cohort" id="cohort-members">${cohortMembers(d, links)}</div>`
}
