/**
 * Built-in `claude-code`: splits Claude Code's side requests, subagents and second sessions into
 * their own agents, so each conversation's steps stay one clean chain for the hold and `why`.
 * Invariant: it acts only on Claude Code's requests (user agent `claude-cli/…` or an
 * `x-claude-code-*` header), only through `identify`, and never edits the body. Its state (the
 * first session on each address, each session's main model and subagents) lives in memory: a
 * restart forgets it.
 */
import { createHash } from 'node:crypto'
import { checkName, fitName } from '../../proxy/core/naming'
import { definePlugin, type Exchange, type IdentifyDecision } from '../api'

interface ClaudeCodeOptions {
  /** A model id containing one of these is a small model (side requests use one). */
  smallModels: string[]
  /** With no tools, a system prompt shorter than this marks a side request. */
  shortSystemChars: number
  /** Classify by the heuristics when neither a request class nor an agent id says. */
  heuristics: boolean
  /** Sessions remembered (the oldest is forgotten first). */
  maxSessions: number
}

const claudeCodeOptionsSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    smallModels: {
      description: 'A model id containing one of these is a small model (side requests use one).',
      type: 'array',
      items: { type: 'string', minLength: 1 },
      default: ['haiku'],
    },
    shortSystemChars: {
      description: 'With no tools, a system prompt shorter than this marks a side request.',
      type: 'integer',
      minimum: 0,
      default: 4000,
    },
    heuristics: {
      description: 'Classify by the heuristics when neither a request class nor an agent id says.',
      type: 'boolean',
      default: true,
    },
    maxSessions: {
      description: 'Sessions remembered (the oldest is forgotten first).',
      type: 'integer',
      minimum: 1,
      default: 1000,
    },
  },
}

type Kind = 'main' | 'subagent' | 'auxiliary'
interface Classification {
  kind: Kind
  /** Why, in one phrase (shown in meta.json's `identified.why` and by `holdfast replay`). */
  via: string
}

/** Claude Code's own requests: its user agent, or any of its hint headers. */
function isClaudeCode(headers: Readonly<Record<string, string>>): boolean {
  if ((headers['user-agent'] ?? '').startsWith('claude-cli/')) return true
  return Object.keys(headers).some((h) => h.startsWith('x-claude-code-'))
}

/**
 * The session id: `x-claude-code-session-id`, else the body's `metadata.user_id`, which Claude
 * Code fills with `user_<hash>_account_<uuid>_session_<uuid>` or a JSON object with `session_id`.
 */
function sessionOf(ex: Exchange): string | undefined {
  const header = ex.headers['x-claude-code-session-id']
  if (header) return header
  const meta = ex.body.metadata
  const userId =
    meta && typeof meta === 'object' && !Array.isArray(meta)
      ? (meta as { user_id?: unknown }).user_id
      : undefined
  if (typeof userId !== 'string') return undefined
  if (userId.startsWith('{')) {
    try {
      const v = (JSON.parse(userId) as { session_id?: unknown }).session_id
      return typeof v === 'string' && v ? v : undefined
    } catch {
      return undefined // not JSON after all: no session id in it
    }
  }
  return /_session_([A-Za-z0-9-]+)$/.exec(userId)?.[1]
}

/** An id as a name part: `[A-Za-z0-9_-]` only, at most `max`; a hash when nothing is left. */
function idPart(raw: string, max: number): string {
  const kept = raw.replace(/[^A-Za-z0-9_-]/g, '').slice(0, max)
  return kept || createHash('sha256').update(raw).digest('hex').slice(0, Math.min(8, max))
}

/**
 * The request's class: the request-class header when present (Claude Code 2.1.332 with
 * CLAUDE_CODE_GATEWAY_HINT_HEADERS=1), else an agent id (every version sends one on a subagent's
 * requests, hint variable or not), else (when allowed) the documented heuristics.
 */
function classify(ex: Exchange, opts: ClaudeCodeOptions, mainModel: string | undefined): Classification {
  const h = ex.headers
  const cls = (h['x-claude-code-request-class'] ?? '').toLowerCase()
  switch (cls) {
    case 'main':
      return { kind: 'main', via: 'request class main' }
    case 'compaction':
      return { kind: 'main', via: 'request class compaction (it carries the main prefix)' }
    case 'subagent':
      return { kind: 'subagent', via: 'request class subagent' }
    case 'auxiliary':
    case 'workflow':
      return { kind: 'auxiliary', via: `request class ${cls}` }
  }
  if (h['x-claude-code-agent-id']) {
    const type = h['x-claude-code-agent-type']
    return { kind: 'subagent', via: `an agent id${type ? ` (${type})` : ''}` }
  }
  if (!opts.heuristics) return { kind: 'main', via: 'no request class or agent id (heuristics off)' }
  const s = ex.summary
  if (s.maxTokens === 1) return { kind: 'auxiliary', via: 'a max_tokens: 1 probe' }
  const small = s.model !== null && opts.smallModels.some((m) => s.model?.includes(m))
  if (small && mainModel !== undefined && mainModel !== s.model)
    return { kind: 'auxiliary', via: `small model ${s.model} while the session's main model is ${mainModel}` }
  if (s.toolNames.length === 0 && s.systemChars < opts.shortSystemChars)
    return { kind: 'auxiliary', via: `no tools and a short system prompt (${s.systemChars} chars)` }
  return { kind: 'main', via: 'no request class or agent id; tools or a full system prompt' }
}

/** A map that forgets its oldest key beyond `max`. */
function remember<V>(map: Map<string, V>, key: string, value: V, max: number): void {
  map.delete(key)
  map.set(key, value)
  if (map.size > max) map.delete(map.keys().next().value as string)
}

export default definePlugin<ClaudeCodeOptions>({
  name: 'claude-code',
  apiVersion: 1,
  optionsSchema: claudeCodeOptionsSchema,
  setup({ options, log }) {
    const firstSession = new Map<string, string>() // `<ws>\0<agent>` → the first session seen there
    const mainModel = new Map<string, string>() // session id → the model of its main requests
    const subagents = new Map<string, string>() // `<session>\0<agent id>` → the agent a subagent got
    return {
      identify(ex): IdentifyDecision | undefined {
        if (!isClaudeCode(ex.headers)) return undefined
        const session = sessionOf(ex)
        let base = ex.agent
        let second = ''
        if (session !== undefined) {
          const address = `${ex.workspace}\0${ex.agent}`
          const first = firstSession.get(address)
          if (first === undefined) remember(firstSession, address, session, options.maxSessions)
          else if (first !== session) {
            base = `${ex.agent}.s-${idPart(session, 8)}`
            second = `; a second session on ${ex.agent}`
          }
        }
        const c = classify(ex, options, session === undefined ? undefined : mainModel.get(session))
        // The model from the body itself: the summary walks the transcript, this needs one field.
        const model = typeof ex.body.model === 'string' ? ex.body.model : null
        if (c.kind === 'main' && session !== undefined && model !== null)
          remember(mainModel, session, model, options.maxSessions)
        let agent: string
        let nested = ''
        if (c.kind === 'main') agent = base
        else if (c.kind === 'auxiliary') agent = fitName(`${base}.aux`)
        else {
          const agentId = ex.headers['x-claude-code-agent-id']
          // A parent that is itself a known subagent of this session nests the child under it.
          const parentId = ex.headers['x-claude-code-parent-agent-id']
          const parent = parentId ? subagents.get(`${session ?? ''}\0${parentId}`) : undefined
          if (parent !== undefined) nested = `; under its parent agent ${parentId}`
          agent = fitName(`${parent ?? base}.sub${agentId ? `-${idPart(agentId, 40)}` : ''}`)
          if (agentId) remember(subagents, `${session ?? ''}\0${agentId}`, agent, options.maxSessions)
        }
        if (agent === ex.agent) return undefined
        const problem = checkName('agent', agent)
        if (problem) {
          log.warn('left the request on its addressed agent', { problem })
          return undefined
        }
        return { agent, why: `claude-code: ${c.via}${nested}${second}` }
      },
    }
  },
})
