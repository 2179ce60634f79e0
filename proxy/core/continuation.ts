/**
 * An attempt's first request (DESIGN §9): the notch's recorded request, then the notch's reply as
 * the assistant turn, then one user turn — error results for any tool calls the reply made ("not
 * run: this attempt forked here"), the pinned skills' text, and the goal, verbatim. From a clean
 * start, just the goal. Pure; the wire shape of each part is the dialect's (`Dialect.firstRequest`).
 * The tools array stays the notch's, so every tool the history names is still declared. A request
 * that asks the provider to compare its cache (anthropic `diagnostics`, responses
 * `prompt_cache_options`) names the notch's answer, the one the attempt continues from, never the
 * stale id the notch's own request carried (none when the notch's answer has no id).
 */
import type { Dialect, FirstRequestInput } from './dialect'

export const NOT_RUN = 'not run: this attempt forked here'
export const DEFAULT_MAX_TOKENS = 4096

/** The user turn's text: each pinned skill in a `<skill path>` element, then the goal, verbatim. */
export function userText(skills: readonly { dest: string; text: string }[], goal: string): string {
  const context = skills.map((s) => `<skill path="${s.dest}">\n${s.text.trimEnd()}\n</skill>\n\n`).join('')
  return context + goal
}

export interface AttemptInput extends Omit<FirstRequestInput, 'text'> {
  goal: string
  /** The notch's answer id (meta.json answer_id): what the attempt's diagnostics id names. */
  answerId?: string | null
  /** Pinned skill files: their destination and text, in pin order. */
  skills: readonly { dest: string; text: string }[]
}

export function firstRequest(dialect: Dialect, input: AttemptInput) {
  const { goal, skills, answerId, ...rest } = input
  const body = dialect.firstRequest({ ...rest, text: userText(skills, goal) })
  const named = rest.notch ? dialect.cacheComparison?.naming(body, answerId ?? undefined) : undefined
  if (named) body[named.key] = named.value
  return body
}
