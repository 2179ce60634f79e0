/**
 * Built-in `claude-code`: splits Claude Code's side requests, subagents and second sessions into
 * their own agents, so each conversation's steps stay one clean chain for the hold and `why`, and
 * marks compaction requests and the first main request after one. Invariant: it acts only on
 * Claude Code's requests (user agent `claude-cli/…` or an `x-claude-code-*` header), only through
 * `identify`, and never edits the body. Which session owns an address comes from the records (the
 * session id of the addressed agent's latest step, read once per address; the first session seen
 * when it has none), so the layout is the same whether serve ran all along or not; each session's
 * main model, subagents and last compaction live in memory.
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

const SUMMARY_ASKED = 'create a detailed summary of the conversation'
const CONTINUED = 'This session is being continued from a previous conversation'

/** The text of a message's content (a string, or its text blocks joined). */
function textOfMessage(m: unknown): string {
  const content = m && typeof m === 'object' ? (m as { content?: unknown }).content : undefined
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  return content.map((b: unknown) => ((b as { text?: unknown })?.text as string | undefined) ?? '').join('\n')
}

/** How a main request shows it is a compaction request: its header, else its shape; undefined when it is not one. */
function compactionRequest(ex: Exchange): string | undefined {
  const h = ex.headers
  if ((h['x-claude-code-request-class'] ?? '').toLowerCase() === 'compaction')
    return 'header x-claude-code-request-class: compaction'
  if (h['x-claude-code-compaction'])
    return `header x-claude-code-compaction: ${h['x-claude-code-compaction']}`
  if (ex.summary.lastUserText.includes(SUMMARY_ASKED))
    return 'its last user turn asks for a summary of the conversation'
  return undefined
}

/** How a main request shows its transcript starts again from a summary: its header, else its first message. */
function compactedTranscript(ex: Exchange): string | undefined {
  const h = ex.headers['x-claude-code-context-compacted']
  if (h) return `header x-claude-code-context-compacted: ${h}`
  const messages = ex.body.messages
  const first = Array.isArray(messages) ? (messages as unknown[])[0] : undefined
  if (textOfMessage(first).includes(CONTINUED)) return 'its first message continues from a summary'
  return undefined
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
  setup({ options, log, records }) {
    // `<ws>\0<agent>` → the session that owns the address: its latest step's, read once, else the first seen.
    const owners = new Map<string, Promise<string | undefined>>()
    const mainModel = new Map<string, string>() // session id → the model of its main requests
    const subagents = new Map<string, string>() // `<session>\0<agent id>` → the agent a subagent got
    const compacting = new Map<string, boolean>() // session id → its last main request was a compaction
    const ownerOf = (ex: Exchange, session: string): Promise<string | undefined> => {
      const address = `${ex.workspace}\0${ex.agent}`
      let owner = owners.get(address)
      if (owner === undefined) {
        owner = records
          .latestStep(ex.workspace, ex.agent)
          .then((last) => last?.headers['x-claude-code-session-id'] ?? session)
          .catch(() => session)
        owners.set(address, owner)
        if (owners.size > options.maxSessions) owners.delete(owners.keys().next().value as string)
      }
      return owner
    }
    return {
      async identify(ex): Promise<IdentifyDecision | undefined> {
        if (!isClaudeCode(ex.headers)) return undefined
        const session = sessionOf(ex)
        let base = ex.agent
        let second = ''
        if (session !== undefined) {
          const owner = await ownerOf(ex, session)
          if (owner !== session) {
            base = `${ex.agent}.s-${idPart(session, 8)}`
            second = `; a second session on ${ex.agent}`
          }
        }
        const c = classify(ex, options, session === undefined ? undefined : mainModel.get(session))
        // The model from the body itself: the summary walks the transcript, this needs one field.
        const model = typeof ex.body.model === 'string' ? ex.body.model : null
        if (c.kind === 'main' && session !== undefined && model !== null)
          remember(mainModel, session, model, options.maxSessions)
        let compaction: IdentifyDecision['compaction']
        if (c.kind === 'main') {
          const asked = compactionRequest(ex)
          const after = asked === undefined && session !== undefined && compacting.get(session)
          const continued = after ? compactedTranscript(ex) : undefined
          if (asked !== undefined) compaction = { kind: 'request', via: asked }
          else if (continued !== undefined) compaction = { kind: 'after', via: continued }
          if (session !== undefined) remember(compacting, session, asked !== undefined, options.maxSessions)
        }
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
        const marked = compaction ? { compaction } : undefined
        if (agent === ex.agent) return marked
        const problem = checkName('agent', agent)
        if (problem) {
          log.warn('left the request on its addressed agent', { problem })
          return marked
        }
        return { agent, why: `claude-code: ${c.via}${nested}${second}`, ...marked }
      },
    }
  },
})
