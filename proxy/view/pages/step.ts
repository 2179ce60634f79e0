/**
 * `/ui/w/<ws>/a/<agent>/s/<NNN>`: one step — `why` in words (report/why, as `holdfast why` says
 * it), a structural diff against the previous step, the conversation as a transcript (system,
 * messages, tool calls and results, the answer rebuilt from the recorded stream; what the previous
 * step already sent folded), meta, and links to the raw bytes as recorded. The Fork from here form
 * is added by the server (fork.ts). A pure renderer of report/step-data's data: it reads nothing.
 * Invariant: a record that cannot be read is said on the page.
 */
import { diffHtml, type HeldSides } from './step-diff'
import { HOLD_SAVED } from '../../core/saving-words'
import { shownChanges } from '../../core/why-words'
import type { Json } from '../../core/json'
import { formatStep } from '../../core/naming'
import { META_FILE, REQUEST_FILE, stepTreePath } from '../../core/layout'
import type { StepData } from '../../report/step-data'
import { fmtMs, fmtTime, fmtTokens, fmtUsd, type Html, markup } from '../html'
import type { Links } from '../links'
import { entryHtml, textHtml } from '../transcript'

function whyHtml(d: StepData): Html {
  return markup`<ul class="why" data-cause="${d.why.cause}">
    ${[...d.why.cause_lines, ...d.why.summary].map((l) => markup`<li>${l}</li>`)}${shownChanges(
      d.why.changes,
    ).map((c) => markup`<li>changed <code>${c.field}</code>: ${c.why}</li>`)}
  </ul>`
}

/** The system part; in an export, a system the previous step already sent is a link to it. */
function systemHtml(d: StepData, system: string, links: Links): Html {
  const head = markup`<div class="role">system</div>`
  if (links.mode === 'export' && d.previous && d.diff && !d.diff.system.changed)
    return markup`<div class="msg system">${head}<p class="muted">${system.length} characters, as sent by <a href="${links.step(d.ws, d.agent, d.previous.n)}">step ${formatStep(d.previous.n)}</a>.</p></div>`
  return markup`<div class="msg system">${head}${textHtml(system)}</div>`
}

/** The transcript: system, messages (what the previous step already sent folded), the answer. */
function transcriptHtml(d: StepData, links: Links): Html {
  const req = d.request
  if (!req) return markup`<p class="bad">${d.requestFault ?? 'no request recorded'}</p>`
  const system = d.dialect.systemText(req)
  const entries = d.dialect.transcript(req)
  const kept = d.diff ? d.diff.messages.common : 0
  const earlier = entries.slice(0, kept)
  const added = entries.slice(kept)
  const earlierHtml =
    earlier.length === 0
      ? ''
      : links.mode === 'export' && d.previous
        ? markup`<p class="muted">
            ${earlier.length} earlier messages, as sent by
            <a href="${links.step(d.ws, d.agent, d.previous.n)}">step ${formatStep(d.previous.n)}</a>.
          </p>`
        : markup`<details class="earlier">
            <summary>${earlier.length} earlier messages, as step ${formatStep(d.n - 1)} sent them</summary>
            ${earlier.map((e) => entryHtml(e))}
          </details>`
  const answer = d.reply
    ? markup`${d.reply.turn.map((e: Json) => entryHtml(e, 'answer'))}`
    : markup`<p class="muted">
        ${d.responseFile ? 'The answer has no assistant turn (an error, or an empty stream): see the raw response.' : 'No answer recorded (yet).'}
      </p>`
  return markup`<div class="toolbar">
      <button type="button" data-fold="open" data-target="#transcript" hidden>unfold all</button
      ><button type="button" data-fold="close" data-target="#transcript" hidden>fold all</button>
    </div>
    <div id="transcript">
      ${system ? systemHtml(d, system, links) : ''}
      ${earlierHtml}${added.map((e) => entryHtml(e))}
      <h3>Answer</h3>
      ${answer}
    </div>`
}

function metaHtml(d: StepData, links: Links): Html {
  const m = d.meta
  const rawLinks = [REQUEST_FILE, d.responseFile, META_FILE]
    .filter((f): f is string => typeof f === 'string')
    .map((f) => ({ f, href: links.raw(d.ws, d.agent, d.n, f) }))
  const gitPath = `agents/${d.agent}:${stepTreePath(d.agent, d.n)}/${REQUEST_FILE}`
  return markup`<p>
      ${rawLinks.map((l) => (l.href ? markup`<a href="${l.href}">${l.f}</a> · ` : ''))}
      <code>git -C &lt;home&gt;/workspaces/${d.ws}/repo.git show ${gitPath}</code
      >${d.committed ? '' : markup` <span class="muted">(pending: not committed yet)</span>`}
    </p>
    <details>
      <summary>${META_FILE}</summary>
      <pre>${JSON.stringify(m, null, 2)}</pre>
    </details>`
}

export function stepHeader(d: StepData, links: Links): Html {
  const m = d.meta
  const u = m.usage
  return markup`<h1>Step ${formatStep(d.n)} <span class="muted">of ${d.agent} in ${d.ws}</span></h1>
    <p>
      ${d.n > 1 ? markup`<a href="${links.step(d.ws, d.agent, d.n - 1)}">← ${formatStep(d.n - 1)}</a>` : ''}
      ${d.n < d.last ? markup` · <a href="${links.step(d.ws, d.agent, d.n + 1)}">${formatStep(d.n + 1)} →</a>` : ''}
    </p>
    <div class="cards">
      <div class="card">
        <b>${m.route.model ?? '-'}</b
        ><span>${m.dialect} via ${m.route.provider}${m.route.role ? ` as ${m.route.role}` : ''}</span>
      </div>
      <div class="card">
        <b>${m.status ?? m.outcome ?? 'in flight'}</b><span>${fmtTime(m.started_at)}</span>
      </div>
      <div class="card">
        <b>${fmtTokens(u?.cache_read_tokens)} / ${fmtTokens(u?.cache_write_tokens)}</b
        ><span>cache read / write</span>
      </div>
      <div class="card">
        <b>${fmtTokens(u?.input_tokens)} / ${fmtTokens(u?.output_tokens)}</b
        ><span>uncached input / output</span>
      </div>
      <div class="card">
        <b>${m.cost ? fmtUsd(m.cost.usd) : u ? 'unpriced' : '-'}</b
        ><span
          >cost${m.cost?.saved_by_hold_usd ? `, ${HOLD_SAVED} ${fmtUsd(m.cost.saved_by_hold_usd)}` : ''}</span
        >
      </div>
      <div class="card"><b>${fmtMs(m.ttfb_ms)}</b><span>first byte (total ${fmtMs(m.total_ms)})</span></div>
    </div>`
}

/** A held step's two sides, from its meta.json; undefined when the hold did not apply. */
function heldSidesOf(meta: StepData['meta']): HeldSides | undefined {
  if (!meta.hold.applied || !meta.client_tools) return undefined
  return { client: meta.client_tools, held: meta.hold.held }
}

/** The step page's body; `fork` is the server's Fork from here section (absent in an export). */
export function stepBody(d: StepData, links: Links, fork?: Html): Html {
  return markup`${stepHeader(d, links)}
    <h2>Why</h2>
    ${whyHtml(d)} ${fork ?? ''}
    <h2>Diff</h2>
    ${d.diff && d.previous ? diffHtml(d.diff, formatStep(d.previous.n), heldSidesOf(d.meta)) : markup`<p class="muted">${d.n === 1 ? 'First step: nothing to compare.' : 'The previous step has no readable record.'}</p>`}
    <h2>Conversation</h2>
    ${transcriptHtml(d, links)}
    <h2>Meta</h2>
    ${metaHtml(d, links)}`
}
