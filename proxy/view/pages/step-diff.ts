/**
 * A step page's diff against the previous step, as markup (pure): the model, the messages (added,
 * or the transcript rewritten from where), the tools sent upstream and, for a held step, the tools
 * the client sent beside them, the system (line by line when short enough), other fields and
 * cache-keying headers. Invariant: it renders the diff view/diff.ts computed from the records and
 * adds nothing to it.
 */
import type { StepDiff } from '../../report/diff'
import { type Html, markup } from '../html'

const names = (list: readonly string[]): Html =>
  markup`${list.map((n, i) => markup`${i ? ', ' : ''}<code>${n}</code>`)}`

/** A held step's two sides of its tools: what the client sent and which of them the hold kept. */
export interface HeldSides {
  /** The client's tools, by name, in its order (meta.json client_tools). */
  client: readonly string[]
  /** The tools the hold sent that the client had dropped. */
  held: readonly string[]
}

/** The diff's list and the system's line diff; `heldSides` for a held step. */
export function diffHtml(d: StepDiff, previous: string, heldSides?: HeldSides): Html {
  const m = d.messages
  const t = d.tools
  const items: Html[] = []
  if (d.model) items.push(markup`<li>model: <code>${d.model.from}</code> → <code>${d.model.to}</code></li>`)
  items.push(
    m.rewrittenFrom !== null
      ? markup`<li class="bad">
          transcript rewritten from message ${m.rewrittenFrom}: ${m.previous} messages before, ${m.current}
          now (${m.common} kept)
        </li>`
      : markup`<li>messages: ${m.added} added (${m.previous} → ${m.current})</li>`,
  )
  const toolBits: Html[] = []
  if (t.added.length) toolBits.push(markup`added ${names(t.added)}`)
  if (t.removed.length) toolBits.push(markup`removed ${names(t.removed)}`)
  if (t.edited.length) toolBits.push(markup`edited ${names(t.edited)}`)
  if (t.reordered) toolBits.push(markup`reordered`)
  items.push(
    markup`<li>
      tools${heldSides ? ' sent upstream' : ''} (${t.previous} → ${t.current}):
      ${toolBits.length ? toolBits.map((b, i) => markup`${i ? '; ' : ''}${b}`) : 'unchanged'}
    </li>`,
  )
  // The client's side of a held step: the diff above is what went upstream (the held array).
  if (heldSides)
    items.push(
      markup`<li>
        tools the client sent (${t.previous} → ${heldSides.client.length}):
        ${heldSides.held.length ? markup`dropped ${names(heldSides.held)}` : 'reordered'}; the hold re-sent
        step ${previous}'s array
      </li>`,
    )
  items.push(
    d.system.changed
      ? markup`<li class="bad">
          system changed (${d.system.from} → ${d.system.to}
          characters)${d.system.lines ? '' : ': too long to compare line by line'}
        </li>`
      : markup`<li>system unchanged</li>`,
  )
  if (d.fields.length) items.push(markup`<li>other fields changed: ${names(d.fields)}</li>`)
  for (const h of d.headers)
    items.push(
      markup`<li>header <code>${h.name}</code>: ${h.from ?? '(absent)'} → ${h.to ?? '(absent)'}</li>`,
    )
  const lines = d.system.lines
  return markup`<p class="muted">Against step ${previous}.</p>
    <ul>
      ${items}
    </ul>
    ${
      lines
        ? markup`<div class="toolbar" hidden>
              <label
                ><input type="checkbox" data-diff-toggle="#system-diff" checked /> changed lines only</label
              >
            </div>
            <pre class="diff" id="system-diff">
${lines.map((l) => markup`<span class="${l.op}">${l.op === 'add' ? '+ ' : l.op === 'del' ? '- ' : '  '}${l.text}\n</span>`)}</pre>`
        : ''
    }`
}
