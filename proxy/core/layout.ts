/**
 * What a step's record looks like (DESIGN §2 "record", §3): the names of its files, where they are
 * in its agent's tree in git, the branch it is committed on (the ref namespace), its commit's
 * author and message, written and parsed here. One home for the layout: the journal, the commit and
 * every reader take it from here. Pure.
 */
import type { StepMeta } from '../../generated/meta'
import { formatStep, parseStep } from './naming'

export const REQUEST_FILE = 'request.json'
export const META_FILE = 'meta.json'
export const RESPONSE_FILES = ['response.json', 'response.sse', 'response.txt'] as const
/** A WebSocket frame exactly as sent upstream, beside request.json (the whole conversation it continues). */
export const FRAME_FILE = 'frame.json'
export type ResponseFile = (typeof RESPONSE_FILES)[number]

/** Where the agents' branches are: `refs/heads/agents/<agent>` (DESIGN §2 "agent"). */
export const AGENTS_PREFIX = 'refs/heads/agents/'
/** The branch an agent's steps are committed on. */
export const agentRef = (agent: string): string => `${AGENTS_PREFIX}${agent}`
/** The agent a branch under AGENTS_PREFIX is; undefined for any other ref. */
export function agentOfRef(ref: string): string | undefined {
  return ref.startsWith(AGENTS_PREFIX) ? ref.slice(AGENTS_PREFIX.length) : undefined
}
/** Where the config lineages are: `refs/heads/config/<lineage>` (DESIGN §8). */
export const configRef = (lineage: string): string => `refs/heads/config/${lineage}`

/** Who holdfast's commits (and reflog lines) are by. */
export const COMMIT_AUTHOR = { name: 'holdfast', email: 'holdfast@localhost' } as const

/** `meta.json` as committed: indented JSON and a final newline. */
export function metaBytes(meta: StepMeta): Buffer {
  return Buffer.from(JSON.stringify(meta, null, 2) + '\n')
}

/** Where a step's files are in its agent's tree in git: `steps/<agent>/<NNN>`. */
export const STEPS_DIR = 'steps'
/** The tree of an agent's steps, one entry per step: `steps/<agent>`. */
export function agentStepsPath(agent: string): string {
  return `${STEPS_DIR}/${agent}`
}
export function stepTreePath(agent: string, n: number): string {
  return `${agentStepsPath(agent)}/${formatStep(n)}`
}

/** The answer's file for its content type: SSE, JSON, else text (a cut-off answer is text too). */
export const RESPONSE_TEXT: ResponseFile = 'response.txt'
export function responseFileFor(contentType: string): ResponseFile {
  const type = contentType.toLowerCase()
  return type.includes('text/event-stream')
    ? 'response.sse'
    : type.includes('json')
      ? 'response.json'
      : RESPONSE_TEXT
}

/** A step commit's message: `step NNN: <model> [<agent>]`. */
export function stepSubject(agent: string, n: number, model: string | null): string {
  return `step ${formatStep(n)}: ${model ?? 'unknown model'} [${agent}]\n`
}

const STEP_SUBJECT = /^step (\d{3,}): .* \[([^\]]+)\]\s*$/

/** The step a commit records, from its message; undefined for other commits. */
export function stepOfSubject(message: string): { agent: string; n: number } | undefined {
  const m = STEP_SUBJECT.exec(message.split('\n')[0] ?? '')
  const n = m ? parseStep(m[1] as string) : undefined
  return m && n !== undefined ? { agent: m[2] as string, n } : undefined
}
