/**
 * view/pages/step-diff: the diff as markup. What went upstream is said as "tools sent upstream"
 * on a held step, with the client's side beside it (a tool fewer, and the hold re-sent the
 * array); a step the hold did not touch says only "tools"; a rewritten transcript is marked.
 */
import type { StepDiff } from '../../../../proxy/report/diff'
import { diffHtml } from '../../../../proxy/view/pages/step-diff'

const diff = (over: Partial<StepDiff> = {}): StepDiff => ({
  model: null,
  messages: { previous: 1, current: 3, common: 1, added: 2, rewrittenFrom: null },
  tools: { previous: 3, current: 3, added: [], removed: [], edited: [], reordered: false },
  system: { changed: false, from: 10, to: 10, lines: null },
  fields: [],
  headers: [],
  ...over,
})
const flat = (html: string): string => html.replace(/\s+/g, ' ')

describe('a step’s diff', () => {
  it('gives a held step both sides: the tools sent upstream and the tools the client sent', () => {
    const html = flat(diffHtml(diff(), '004', { client: ['Read', 'Write'], held: ['notes'] }).text)
    expect(html).toContain('tools sent upstream (3 → 3): unchanged')
    expect(html).toContain(
      "tools the client sent (3 → 2): dropped <code>notes</code>; the hold re-sent step 004's array",
    )
  })

  it('says only “tools” when the hold did not touch the step, and marks a rewritten transcript', () => {
    const html = flat(
      diffHtml(
        diff({
          tools: { previous: 3, current: 2, added: [], removed: ['notes'], edited: [], reordered: false },
          messages: { previous: 4, current: 3, common: 1, added: 0, rewrittenFrom: 1 },
        }),
        '004',
      ).text,
    )
    expect(html).toContain('tools (3 → 2): removed <code>notes</code>')
    expect(html).not.toContain('the client sent')
    expect(html).toContain('<li class="bad"> transcript rewritten from message 1')
  })
})
