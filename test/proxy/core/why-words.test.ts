/**
 * What `holdfast why` says (proxy/core/why-words): the hold in one sentence, a reorder and a drop
 * in words; the first difference with both sides; a header that moved, by the values it dropped
 * and added; a compaction named as such and never as another conversation; nothing said twice.
 */
import type { StepMeta } from '../../../generated/meta'
import { moves } from '../../support/why-moves'
import { excerpt } from '../../../proxy/core/why'
import { explainStep, headerChange, otherConversation, someNames } from '../../../proxy/core/why-words'

const meta = (over: Partial<StepMeta> = {}, session?: string): StepMeta =>
  ({
    route: { provider: 'anthropic', url: 'x', model: 'claude-a' },
    request_headers: session ? { 'x-claude-code-session-id': session } : {},
    cache_keying_headers: {},
    hold: { applied: false, reason: 'no-subtraction', held: [] },
    usage: { input_tokens: 3, output_tokens: 1, cache_read_tokens: 100, cache_write_tokens: 20 },
    ...over,
  }) as StepMeta

describe('otherConversation', () => {
  it('names both sessions when the session ids differ, whatever moved', () => {
    expect(otherConversation(meta({}, 's1'), meta({}, 's2'), moves())).toBe(
      'session s1; this step: session s2',
    )
  })

  it('falls back to the prefix when a session id is missing or the same: both system and first message moved', () => {
    const both = moves({ system: true, head: true })
    expect(otherConversation(meta({}, 's1'), meta(), both)).toBe(
      'another system prompt and another first message',
    )
    expect(otherConversation(meta({}, 's1'), meta({}, 's1'), both)).toBe(
      'another system prompt and another first message',
    )
    expect(otherConversation(meta(), meta(), moves({ system: true }))).toBeUndefined()
    expect(otherConversation(meta(), meta(), moves({ head: true, model: true }))).toBeUndefined()
  })
})

describe('explainStep', () => {
  it('says a held drop once, in words, and nothing about a prefix that the hold kept', () => {
    const held = meta({ hold: { applied: true, reason: 'applied', held: ['mcp__box__shout'] } })
    expect(
      explainStep({ step: '007', meta: held, previous: { step: '006', meta: meta(), moves: moves() } }),
    ).toEqual([
      "the client dropped mcp__box__shout; the hold re-sent step 006's array",
      'provider cache: read 100, wrote 20, uncached input 3',
      'hold saved $0.00 (100 cache writes the hold avoided)',
    ])
  })

  it('says a held reorder, and a drop with a reorder', () => {
    const verdict = (held: string[]): StepMeta['hold'] => ({
      applied: true,
      reason: 'applied',
      held,
      reordered: true,
    })
    const prev = { step: '016', meta: meta(), moves: moves() }
    expect(explainStep({ step: '017', meta: meta({ hold: verdict([]) }), previous: prev })[0]).toBe(
      "the client reordered its tools; the hold re-sent step 016's array",
    )
    expect(explainStep({ step: '017', meta: meta({ hold: verdict(['a', 'b']) }), previous: prev })[0]).toBe(
      "the client dropped a, b and reordered the rest; the hold re-sent step 016's array",
    )
  })

  it('shows both sides of the first difference and the anthropic-beta values that moved', () => {
    const before = 'Runs the agent in the background (1M context). Use this when the task is long.'
    const after = 'Runs the agent in the background. Use this when the task is long.'
    const m = moves({
      tools: true,
      toolChanges: { added: [], removed: [], edited: ['Agent'], reordered: false },
      keying: ['header:anthropic-beta'],
      firstDifference: 'tools[1].description',
      difference: excerpt('tools[1].description', before, after),
    })
    const lines = explainStep({
      step: '005',
      meta: meta({
        cache_keying_headers: { 'anthropic-beta': 'claude-code-20250219,effort-2025-11-24' },
        hold: { applied: false, reason: 'not-a-sub-multiset', held: [] },
      }),
      previous: {
        step: '004',
        meta: meta({
          cache_keying_headers: {
            'anthropic-beta': 'claude-code-20250219,context-1m-2025-08-07,effort-2025-11-24',
          },
        }),
        moves: m,
      },
    })
    expect(lines).toEqual([
      'moved since 004: tools, anthropic-beta',
      'first difference in cache order: tools[1].description, at character 32',
      '  004: Runs the agent in the background (1M context). Use this when the task is long.',
      '  005: Runs the agent in the background. Use this when the task is long.',
      'tools: edited Agent',
      'anthropic-beta: dropped context-1m-2025-08-07',
      'hold not applied (not-a-sub-multiset): a tool was added or its definition changed, so the array went out whole',
      'provider cache: read 100, wrote 20, uncached input 3',
    ])
    expect(new Set(lines).size).toBe(lines.length)
  })

  it('names the tools added, removed and reordered, and a keying header that moved in the hold line', () => {
    const lines = explainStep({
      step: '006',
      meta: meta({
        hold: { applied: false, reason: 'keying-changed', detail: 'header:anthropic-beta', held: [] },
      }),
      previous: {
        step: '005',
        meta: meta(),
        moves: moves({
          tools: true,
          toolChanges: { added: ['mcp__box__shout'], removed: ['Cron'], edited: [], reordered: true },
        }),
      },
    })
    expect(lines).toContain('tools: added mcp__box__shout; removed Cron; the rest reordered')
    expect(lines).toContain(
      'hold not applied (keying-changed: anthropic-beta): the prefix moved anyway, so the tools went out with that miss',
    )
  })

  it('names the model that moved', () => {
    const lines = explainStep({
      step: '002',
      meta: meta({ route: { provider: 'anthropic', url: 'x', model: 'claude-b' } }),
      previous: {
        step: '001',
        meta: meta(),
        moves: moves({
          model: true,
          firstDifference: 'model',
          difference: excerpt('model', 'claude-a', 'claude-b'),
        }),
      },
    })
    expect(lines).toContain('model: claude-a → claude-b')
  })

  it('names a compaction at the step before, not another conversation, even when system and first message both moved', () => {
    const compacted = meta({}, 's1')
    const request = meta(
      { compaction: { kind: 'request', via: 'header x-claude-code-request-class: compaction' } },
      's1',
    )
    const lines = explainStep({
      step: '009',
      meta: compacted,
      previous: { step: '008', meta: request, moves: moves({ system: true, head: true }) },
    })
    expect(lines).toContain(
      'the conversation was compacted at step 008 (header x-claude-code-request-class: compaction): the transcript starts again from its summary, so the prefix is new from the first message on',
    )
    expect(lines.join('\n')).not.toContain('another conversation')
    expect(
      explainStep({
        step: '008',
        meta: request,
        previous: { step: '007', meta: meta({}, 's1'), moves: moves() },
      }),
    ).toContain(
      'this step is a compaction: the model is asked to summarise the conversation (header x-claude-code-request-class: compaction); it carries the main prefix',
    )
  })

  it('names a compaction its step was marked with when the step before is not the compaction request', () => {
    const after = meta({ compaction: { kind: 'after', via: 'its first message continues a summary' } })
    const lines = explainStep({
      step: '003',
      meta: after,
      previous: { step: '002', meta: meta(), moves: moves({ head: true }) },
    })
    expect(lines).toContain(
      'the conversation was compacted (its first message continues a summary): the transcript starts again from its summary, so the prefix is new from the first message on',
    )
  })

  it('says a first step once: the whole prefix is new', () => {
    const first = meta({ hold: { applied: false, reason: 'first-step', held: [] }, usage: null })
    expect(
      explainStep({ step: '001', meta: first, nothingToCompare: 'first step: the whole prefix is new' }),
    ).toEqual(['first step: the whole prefix is new', 'provider cache: not reported'])
  })
})

describe('the pieces', () => {
  it('cuts long names short', () => {
    expect(someNames(['a', 'b', 'c'], 2)).toBe('a, b (+1 more)')
    expect(someNames(['a'])).toBe('a')
  })

  it('says what a comma-separated header dropped and added, or that only its order moved', () => {
    expect(headerChange('anthropic-beta', 'a,b', 'b,c')).toBe('anthropic-beta: dropped a; added c')
    expect(headerChange('anthropic-beta', undefined, 'x')).toBe('anthropic-beta: added x')
    expect(headerChange('anthropic-beta', 'a, b', 'b,a')).toBe(
      'anthropic-beta: the same values in another order',
    )
  })

  it('bounds an excerpt and escapes what would break the line', () => {
    const long = 'x'.repeat(500)
    const d = excerpt('system[2].text', `${long}A\nline${long}`, `${long}B\nline${long}`)
    expect(d.offset).toBe(500)
    expect(d.previous).toBe(`…${'x'.repeat(40)}A\\nline${'x'.repeat(35)}…`)
    expect((d.current ?? '').length).toBeLessThan(100)
    expect(excerpt('tools[3]', undefined, { name: 'a' })).toEqual({
      path: 'tools[3]',
      offset: 0,
      previous: null,
      current: '{"name":"a"}',
    })
  })
})
