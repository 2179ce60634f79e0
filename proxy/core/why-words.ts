/**
 * What `holdfast why` says about one step, in words (DESIGN §11): what moved in the cached prefix
 * and, for the first difference, a bounded excerpt of both sides; the cache-keying headers that
 * moved (`anthropic-beta` values dropped and added, the model); a compaction named as such, not
 * as another conversation; the hold in one sentence ("the client dropped X; the hold re-sent step
 * N's array"); the provider's cache counters. Invariant: each fact is said once. Pure: it reads
 * two steps' facts, already loaded.
 */
import { savedSentence } from './saving-words'
import type { StepMeta } from '../../generated/meta'
import type { PrefixMoves } from './why'

export interface WhyFacts {
  /** This step's number, formatted (`007`). */
  step: string
  meta: StepMeta
  /** The step before it, when there is one with a readable record. */
  previous?: { step: string; meta: StepMeta; moves: PrefixMoves }
  /** Why there is nothing to compare with (a first step, a missing or faulty record), in words. */
  nothingToCompare?: string
}

const SESSION_HEADER = 'x-claude-code-session-id'

/**
 * Why the previous step looks like another conversation's, if it does: another session id (Claude
 * Code sends one on every request), or both the system prompt and the first message differ.
 */
export function otherConversation(prev: StepMeta, cur: StepMeta, moves: PrefixMoves): string | undefined {
  const a = prev.request_headers?.[SESSION_HEADER]
  const b = cur.request_headers?.[SESSION_HEADER]
  if (a !== undefined && b !== undefined && a !== b) return `session ${a}; this step: session ${b}`
  if (moves.system && moves.head) return 'another system prompt and another first message'
  return undefined
}

/** `a, b, c (+4 more)`: at most `max` names. */
export function someNames(names: readonly string[], max = 6): string {
  const shown = names.slice(0, max).join(', ')
  return names.length > max ? `${shown} (+${names.length - max} more)` : shown
}

/** The values a comma-separated header dropped and added (`anthropic-beta`). */
export function headerChange(name: string, was: string | undefined, now: string | undefined): string {
  const list = (v: string | undefined): string[] =>
    (v ?? '')
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean)
  const a = list(was)
  const b = list(now)
  const dropped = a.filter((x) => !b.includes(x))
  const added = b.filter((x) => !a.includes(x))
  const parts = [
    dropped.length ? `dropped ${dropped.join(', ')}` : '',
    added.length ? `added ${added.join(', ')}` : '',
  ].filter(Boolean)
  if (parts.length === 0) return `${name}: the same values in another order`
  return `${name}: ${parts.join('; ')}`
}

/** The hold's verdict in a sentence; undefined when another line already says all of it. */
function holdLine(f: WhyFacts): string | undefined {
  const h = f.meta.hold
  const prev = f.previous?.step ?? 'the previous step'
  if (h.applied) {
    const did =
      h.held.length > 0
        ? `dropped ${someNames(h.held)}${h.reordered ? ' and reordered the rest' : ''}`
        : 'reordered its tools'
    return `the client ${did}; the hold re-sent step ${prev}'s array`
  }
  const detail = h.detail ? `: ${h.detail.replace(/^header:/, '')}` : ''
  switch (h.reason) {
    case 'first-step':
      return f.nothingToCompare === undefined ? `hold not applied: first-step` : undefined
    case 'no-subtraction':
      return 'hold not needed: the same tools in the same order'
    case 'not-a-sub-multiset':
    case 'not-a-subsequence':
      return `hold not applied (${h.reason}): a tool was added or its definition changed, so the array went out whole`
    case 'ttl-expired':
      return `hold not applied (ttl-expired): step ${prev} is older than the cache lifetime, so the cache was cold anyway`
    case 'model-changed':
    case 'system-changed':
    case 'head-changed':
    case 'keying-changed':
      return `hold not applied (${h.reason}${detail}): the prefix moved anyway, so the tools went out with that miss`
    default:
      return `hold not applied: ${h.reason}${h.detail ? ` (${h.detail})` : ''}`
  }
}

/** The compaction this step shows, if any (a compaction request, or the first step after one). */
function compactionLine(f: WhyFacts): string | undefined {
  const here = f.meta.compaction
  if (here?.kind === 'request')
    return `this step is a compaction: the model is asked to summarise the conversation (${here.via}); it carries the main prefix`
  const before = f.previous?.meta.compaction
  if (here?.kind === 'after' || before?.kind === 'request') {
    const at = before?.kind === 'request' ? (f.previous?.step as string) : undefined
    const via = here?.via ?? before?.via
    return `the conversation was compacted${at ? ` at step ${at}` : ''} (${via}): the transcript starts again from its summary, so the prefix is new from the first message on`
  }
  return undefined
}

/** The changes of a step worth a line beside its summary: the hold's own change is its hold line already. */
export function shownChanges<C extends { why: string }>(changes: readonly C[]): C[] {
  return changes.filter((c) => !c.why.startsWith('hold: '))
}

/** The lines of `holdfast why` for one step, in order. */
export function explainStep(f: WhyFacts): string[] {
  const lines: string[] = []
  const compaction = compactionLine(f)
  if (f.nothingToCompare !== undefined) lines.push(f.nothingToCompare)
  const p = f.previous
  if (p && !f.meta.hold.applied) {
    const m = p.moves
    const moved = [
      m.model && 'model',
      m.tools && 'tools',
      m.system && 'system',
      m.head && 'first message',
      ...m.keying.map((k) => k.replace(/^header:/, '')),
    ].filter(Boolean)
    lines.push(
      moved.length
        ? `moved since ${p.step}: ${moved.join(', ')}`
        : `nothing ahead of the transcript moved since ${p.step}`,
    )
    const d = m.difference
    if (d) {
      lines.push(`first difference in cache order: ${d.path}, at character ${d.offset}`)
      lines.push(`  ${p.step}: ${d.previous ?? '(absent)'}`)
      lines.push(`  ${f.step}: ${d.current ?? '(absent)'}`)
    }
    const t = m.toolChanges
    if (t) {
      const said = [
        t.added.length ? `added ${someNames(t.added)}` : '',
        t.removed.length ? `removed ${someNames(t.removed)}` : '',
        t.edited.length ? `edited ${someNames(t.edited)}` : '',
      ].filter(Boolean)
      if (t.reordered) said.push(said.length ? 'the rest reordered' : 'reordered')
      if (said.length) lines.push(`tools: ${said.join('; ')}`)
    }
    if (m.model) lines.push(`model: ${String(p.meta.route.model)} → ${String(f.meta.route.model)}`)
    for (const k of m.keying) {
      if (!k.startsWith('header:')) continue
      const name = k.slice('header:'.length)
      lines.push(headerChange(name, p.meta.cache_keying_headers[name], f.meta.cache_keying_headers[name]))
    }
    const other = compaction === undefined ? otherConversation(p.meta, f.meta, m) : undefined
    if (other) lines.push(`step ${p.step} came from another conversation (${other})`)
  }
  if (compaction) lines.push(compaction)
  if (f.meta.harness_tools?.length)
    lines.push(`loaded tools the harness declared itself (not injected): ${f.meta.harness_tools.join(', ')}`)
  const hold = holdLine(f)
  if (hold) lines.push(hold)
  const u = f.meta.usage
  lines.push(
    u
      ? `provider cache: read ${u.cache_read_tokens}, wrote ${u.cache_write_tokens}, uncached input ${u.input_tokens}`
      : 'provider cache: not reported',
  )
  // A held step ends with what the hold saved: its cache reads would have been writes.
  if (f.meta.hold.applied)
    lines.push(savedSentence(u?.cache_read_tokens ?? 0, f.meta.cost?.saved_by_hold_usd ?? 0))
  return lines
}
