/**
 * One request, stage by stage (DESIGN §5): accept → identify → resolve → compose → hold →
 * record → forward → finish. Each stage takes the Exchange and fills in its part; a stage that
 * refuses throws a HoldfastError, which the server answers in the dialect's envelope.
 * Invariant: the record is written before the send; nothing is sent when it cannot be written.
 */
import type { IncomingHttpHeaders } from 'node:http'
import { randomUUID } from 'node:crypto'
import fsp from 'node:fs/promises'
import path from 'node:path'
import { HoldfastError } from '../core/errors'
import { redactQuery, sanitizeHeaders } from '../core/headers'
import { hold, type HoldVerdict, type PreviousStep, RecordFault } from '../core/hold'
import { harnessName, harnessPrefixes } from '../core/harness-tools'
import { withHistoryClosed } from '../core/history-closure'
import type { Json, JsonObject } from '../core/json'
import { readRequest, recordParser } from '../core/record'
import { presentedName } from '../core/loaded-set'
import { formatStep } from '../core/naming'
import { type RoleDecl, routeByRole } from '../core/roles'
import { applyEdits, jsonBytes, MAX_NESTING, scanTopLevel, type ScannedTop, toolsEdit } from '../core/splice'
import type { Dialect } from '../dialects/types'
import type { Change, StepMeta } from '../generated/meta'
import type { ProviderRow } from '../store/config'
import { readLoadedSet } from '../store/loaded-sets'
import { readRef } from '../store/git-refs'
import { agentRef, configRef, DEFAULT_LINEAGE } from '../store/home'
import { REQUEST_FILE, writeRecord } from '../store/journal'
import type { AgentState } from './agents'
import type { ServerContext } from './context'
import { rowKey, upstreamUrl } from './upstream'

/** A deciding plugin's route answer (DESIGN §10): any of role, provider row, model; `by` names the plugin. */
export interface RouteChoice {
  role?: string
  provider?: string
  model?: string
  by: string
}

export interface Route {
  /** The plugin whose route decision this is, if any. */
  plugin?: string
  provider: string
  row: ProviderRow
  /** The row's key when it names `api_key_env` (never recorded), else the client's own auth goes through. */
  key: string | undefined
  url: URL
  model: string | null
  role: string | null
  configCommit: string | null
  configNote: string | null
}

export interface Exchange {
  readonly id: string
  readonly dialect: Dialect
  readonly kind: 'step' | 'count_tokens'
  /** The path the client called, prefix removed, query kept. */
  readonly path: string
  workspace: string
  agent: string
  /** Set when a plugin's identify moved the request: the plugin and the addressed workspace/agent. */
  identified?: NonNullable<StepMeta['identified']>
  readonly headers: IncomingHttpHeaders
  /** The headers as meta.json records them (no auth, no x-holdfast-*), computed once on first use. */
  readonly recordedHeaders: () => Readonly<Record<string, string>>
  /** The client's body, exactly as received. */
  readonly raw: Buffer
  readonly parsed: JsonObject
  readonly top: ScannedTop
  route?: Route
  /** The followed config resolve read (kept for a plugin's re-resolution). */
  config?: {
    roles: Record<string, RoleDecl> | undefined
    why: string | undefined
    configCommit: string | null
    configNote: string | null
  }
  /** Top-level fields resolve and compose set (role model, tools, …), spliced in one pass. */
  overrides: JsonObject
  changes: Change[]
  injected: string[]
  /** Loaded tools the client already declared under its MCP naming (`mcp__holdfast__fx_echo`). */
  harnessTools: string[]
  /** The composition; `top` only when it is the client's body (a spliced one is scanned if the hold needs it). */
  composed?: { bytes: Buffer; parsed: JsonObject; top?: ScannedTop }
  /** What goes upstream, after the hold. */
  sent?: { bytes: Buffer; parsed: JsonObject; verdict: HoldVerdict }
  /** Set by the record stage; `release` lets the queued commit go once finish has run. */
  step?: { n: number; dir: string; meta: StepMeta; agent: AgentState; release: () => void }
}

const first = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v)

/**
 * Parse a body that must be a request (core/record: nested at most MAX_NESTING deep, one JSON
 * object, the fields the dialect reads of the right type) with no repeated top-level key; 400
 * otherwise, in words that name the problem.
 */
export function parseBody(raw: Buffer, dialect: Dialect): { parsed: JsonObject; top: ScannedTop } {
  const r = readRequest(raw, dialect)
  if (!r.ok) {
    if (r.why === 'field') throw new HoldfastError('BAD_FIELD', `the request is refused: ${r.detail}`)
    throw new HoldfastError(
      'BAD_JSON',
      r.why === 'too-deep'
        ? `the request body is nested deeper than ${MAX_NESTING} levels`
        : r.why === 'not-json'
          ? `the request body is not valid JSON: ${r.detail}`
          : 'the request body must be a JSON object',
    )
  }
  const top = scanTopLevel(raw)
  if (!top.ok) throw new HoldfastError('BAD_JSON', `the request body is refused: ${top.error}`)
  return { parsed: r.value, top }
}

/** accept: the body is read (size-limited by the server) and parsed once. */
export function accept(
  dialect: Dialect,
  kind: 'step' | 'count_tokens',
  path: string,
  workspace: string,
  agent: string,
  headers: IncomingHttpHeaders,
  raw: Buffer,
): Exchange {
  const { parsed, top } = parseBody(raw, dialect)
  let clean: Readonly<Record<string, string>> | undefined
  return {
    id: randomUUID(),
    dialect,
    kind,
    path,
    workspace,
    agent,
    headers,
    recordedHeaders: () => (clean ??= Object.freeze(sanitizeHeaders(headers))),
    raw,
    parsed,
    top,
    overrides: {},
    changes: [],
    injected: [],
    harnessTools: [],
  }
}

/** identify: plugins may reassign the workspace and agent (DESIGN §10); names are re-checked. */
export async function identify(ctx: ServerContext, ex: Exchange): Promise<void> {
  await ctx.plugins.identify(ex)
}

/** The roles an agent's step resolves against: its followed config, read at this step boundary. */
async function readConfig(ctx: ServerContext, ex: Exchange): Promise<NonNullable<Exchange['config']>> {
  const ws = ctx.workspace(ex.workspace)
  // A workspace that does not exist yet has only the starter config (no roles); it is created
  // when the step is recorded, so a request refused before that leaves nothing on disk.
  if (!ws.exists()) {
    return {
      roles: {},
      why: undefined,
      configCommit: null,
      configNote: 'new workspace: the starter config declares no roles',
    }
  }
  const resolved = await ctx.configReader(ex.workspace).resolve(`agent:${ex.agent}`, async () => {
    return (
      (await readRef(ws.repo, agentRef(ex.agent))) ?? (await readRef(ws.repo, configRef(DEFAULT_LINEAGE)))
    )
  })
  if (!resolved.ok)
    return { roles: undefined, why: resolved.message, configCommit: null, configNote: resolved.message }
  const configCommit = resolved.followed.commit
  const held = resolved.followed.kind === 'held' ? resolved.followed.note : null
  if (!resolved.roles.ok) {
    return { roles: undefined, why: resolved.roles.error, configCommit, configNote: resolved.roles.error }
  }
  return { roles: resolved.roles.value.roles, why: undefined, configCommit, configNote: held }
}

/**
 * resolve: the role the request names (x-holdfast-role, else a model equal to a role name) at
 * the agent's followed config, or the dialect's default row (the row named after the dialect).
 * The followed config is recorded either way; roles are read at each step boundary.
 */
export async function resolve(ctx: ServerContext, ex: Exchange, choice?: RouteChoice): Promise<void> {
  if (choice) {
    // A plugin's route decision re-resolves: drop what the first resolution set.
    const maxField = ex.dialect.maxTokensField
    delete ex.overrides.model
    delete ex.overrides[maxField]
    ex.changes = ex.changes.filter((c) => c.field !== 'model' && c.field !== maxField)
  }
  // A plugin's route decision is resolved against the same config the first pass read.
  const { roles, why, configCommit, configNote } = (ex.config ??= await readConfig(ctx, ex))
  const name = ex.dialect.name
  const r = routeByRole(
    choice?.role ?? first(ex.headers['x-holdfast-role']),
    ex.parsed.model,
    roles,
    why,
    ctx.config.providers,
    name,
  )
  if (r.kind === 'refused') throw new HoldfastError(r.code, r.message)
  const provider = choice?.provider ?? (r.kind === 'role' ? r.provider : name)
  const row = ctx.config.providers[provider]
  if (choice?.provider !== undefined && (!row || row.dialect !== name)) {
    throw new HoldfastError(
      'PLUGIN_FAILED',
      `plugin ${choice.by} (route) chose provider row "${provider}", which ${row ? `speaks ${row.dialect}, not ${name}` : 'holdfast.yaml does not declare'}`,
    )
  }
  if (!row) {
    throw new HoldfastError(
      'NO_PROVIDER_ROW',
      `holdfast.yaml declares no provider row "${provider}" for ${name} requests`,
    )
  }
  let model = typeof ex.parsed.model === 'string' ? ex.parsed.model : null
  if (r.kind === 'role') {
    if (r.model !== ex.parsed.model) {
      ex.overrides.model = r.model
      ex.changes.push({
        field: 'model',
        why: `role "${r.role}" (${r.via === 'header' ? 'x-holdfast-role' : 'model names the role'}) uses ${r.model}`,
      })
    }
    model = r.model
    const maxField = ex.dialect.maxTokensField
    const clientSent =
      ex.parsed[maxField] !== undefined || (name === 'openai' && ex.parsed.max_tokens !== undefined)
    if (r.maxOutputTokens !== undefined && !clientSent) {
      ex.overrides[maxField] = r.maxOutputTokens
      ex.changes.push({
        field: maxField,
        why: `role "${r.role}" sets max_output_tokens ${r.maxOutputTokens}`,
      })
    }
  }
  if (choice?.model !== undefined && choice.model !== model) {
    ex.overrides.model = choice.model
    ex.changes = ex.changes.filter((c) => c.field !== 'model')
    ex.changes.push({ field: 'model', why: `${choice.by} chose ${choice.model}` })
    model = choice.model
  }
  ex.route = {
    provider,
    row,
    key: undefined,
    url: upstreamUrl(row, ex.path),
    model,
    role: r.kind === 'role' ? r.role : null,
    configCommit,
    configNote,
    ...(choice ? { plugin: choice.by } : {}),
  }
}

/**
 * The route's key, once plugins have routed: a row naming an unset `api_key_env` cannot send, so
 * it is refused here, before a step is numbered or recorded.
 */
export function authorize(ex: Exchange): void {
  const route = ex.route as Route
  route.key = rowKey(route.provider, route.row)
}

/**
 * compose: the client's body plus the agent's loaded tools (after the client's own; not those the
 * client declares itself, as its own or through holdfast's MCP endpoint), and row settings.
 */
export function compose(ctx: ServerContext, ex: Exchange): void {
  const route = ex.route as Route
  const loaded = readLoadedSet(ctx.home, ex.workspace, ex.agent)
  const overrides = ex.overrides
  if (loaded.length > 0) {
    const clientTools = Array.isArray(ex.parsed.tools) ? ex.parsed.tools : []
    const clientNames = new Set(clientTools.map((t) => ex.dialect.toolName(t)).filter((n) => n !== undefined))
    const prefixes = harnessPrefixes(clientNames)
    const added: Json[] = []
    const clashes: string[] = []
    for (const entry of loaded) {
      const name = presentedName(entry)
      // Declared by the harness itself through holdfast's MCP endpoint: never a second time.
      const own = harnessName(name, clientNames, prefixes)
      if (clientNames.has(name)) clashes.push(name)
      else if (own !== undefined) ex.harnessTools.push(own)
      else {
        added.push(ex.dialect.presentTool(entry))
        ex.injected.push(name)
      }
    }
    if (added.length > 0) {
      overrides.tools = [...clientTools, ...added]
      ex.changes.push({ field: 'tools', why: `appended loaded tools: ${ex.injected.join(', ')}` })
    }
    if (clashes.length > 0) {
      ex.changes.push({
        field: 'tools',
        why: `kept the client's own tool over the loaded one: ${clashes.join(', ')}`,
      })
    }
  }
  if (
    ex.dialect.name === 'openai' &&
    route.row.prompt_cache_key === 'agent' &&
    ex.parsed.prompt_cache_key === undefined
  ) {
    overrides.prompt_cache_key = `${ex.workspace}/${ex.agent}`
    ex.changes.push({ field: 'prompt_cache_key', why: `provider row "${route.provider}" sets it per agent` })
  }
  const edits = Object.entries(overrides).map(([key, value]) =>
    key === 'tools' ? toolsEdit(value as Json[]) : { key, value: jsonBytes(value) },
  )
  ex.composed =
    edits.length === 0
      ? { bytes: ex.raw, parsed: ex.parsed, top: ex.top }
      : { bytes: applyEdits(ex.raw, ex.top, edits), parsed: { ...ex.parsed, ...overrides } }
}

/** The cache-keying request headers the hold compares (anthropic-beta). */
export function keyingHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {}
  const beta = first(headers['anthropic-beta'])
  if (beta !== undefined) out['anthropic-beta'] = beta
  return out
}

/**
 * The previous record for the hold, read with the dialect's checks; a record that cannot be read
 * back is answered as the fault it is, never thrown (it must not block the agent).
 */
export function readPrevious(
  ex: Exchange,
  agent: AgentState,
  n: number,
): PreviousStep | RecordFault | undefined {
  try {
    return agent.previous(n, recordParser(ex.dialect))
  } catch (err) {
    if (err instanceof RecordFault) return err
    throw err
  }
}

/** hold: apply DESIGN §6 against `previous` (undefined for a first step; a RecordFault: sent as composed). */
export function applyHold(
  ctx: ServerContext,
  ex: Exchange,
  previous: PreviousStep | RecordFault | undefined,
): void {
  const composed = ex.composed as NonNullable<Exchange['composed']>
  const result = hold(
    ex.dialect,
    previous,
    { ...composed, headers: keyingHeaders(ex.headers) },
    { now: Date.now(), ttlMs: ctx.holdTtlMs, longTtlMs: ctx.holdLongTtlMs },
  )
  const v = result.verdict
  let parsed = composed.parsed
  if (v.applied && previous && !(previous instanceof RecordFault)) {
    parsed = { ...composed.parsed, tools: previous.parsed.tools as Json }
    ex.changes.push({
      field: 'tools',
      why: `hold: re-sent the previous step's tools array; held: ${v.held.join(', ')}`,
    })
  }
  // History closure (DESIGN §7) on what is about to be sent, so after the hold: a name the hold
  // re-declares needs none, and a closure inside the composition would defeat the hold.
  const closed = withHistoryClosed(ex.dialect, result.body, parsed, Object.keys(ctx.config.clients ?? {}))
  if (closed) {
    parsed = closed.parsed
    ex.changes.push({
      field: 'tools',
      why: `history closure: declared ${closed.names.join(', ')} (called in the transcript, no longer loaded) with its refusal as description`,
    })
  }
  ex.sent = { bytes: closed?.bytes ?? result.body, parsed, verdict: v }
}

/**
 * hold + record: one critical section per agent. Numbering, reading the previous record, the
 * hold, and writing this record happen under the agent's lock, so concurrent requests of one
 * agent get contiguous numbers and each holds against its real predecessor.
 */
export async function holdAndRecord(ctx: ServerContext, ex: Exchange, agent: AgentState): Promise<void> {
  await agent.init()
  await agent.lock.run(async () => {
    const n = agent.next
    applyHold(ctx, ex, readPrevious(ex, agent, n))
    const sent = ex.sent as NonNullable<Exchange['sent']>
    const route = ex.route as Route
    const dir = agent.stepDir(n)
    const meta: StepMeta = {
      version: 1,
      workspace: ex.workspace,
      agent: ex.agent,
      step: formatStep(n),
      dialect: ex.dialect.name,
      endpoint: redactQuery(ex.path),
      started_at: new Date().toISOString(),
      route: {
        provider: route.provider,
        url: redactQuery(route.url.href),
        model: typeof sent.parsed.model === 'string' ? sent.parsed.model : null,
        role: route.role,
        config_commit: route.configCommit,
        config_note: route.configNote,
        plugin: route.plugin ?? null,
      },
      ...(ex.identified ? { identified: ex.identified } : {}),
      request_headers: { ...ex.recordedHeaders() },
      cache_keying_headers: keyingHeaders(ex.headers),
      hold: sent.verdict,
      injected_tools: ex.injected,
      ...(ex.harnessTools.length > 0 ? { harness_tools: ex.harnessTools } : {}),
      changes: ex.changes,
      request_bytes: sent.bytes.length,
    }
    try {
      writeRecord(dir, sent.bytes, meta, ctx.journalFsync)
    } catch (err) {
      await fsp.rm(dir, { recursive: true, force: true }).catch(() => undefined)
      throw new HoldfastError(
        'RECORD_WRITE_FAILED',
        `the record of step ${formatStep(n)} could not be written; nothing was sent`,
        {
          cause: err,
        },
      )
    }
    agent.next = n + 1
    agent.remember(n, {
      path: path.join(dir, REQUEST_FILE),
      bytes: sent.bytes,
      parsed: sent.parsed,
      sentAt: Date.parse(meta.started_at),
      headers: meta.cache_keying_headers,
    })
    let release!: () => void
    const finished = new Promise<void>((resolve) => (release = resolve))
    ex.step = { n, dir, meta, agent, release }
    // Queued inside the lock, so commits are chained in step order.
    void agent.queueCommit(n, finished, meta.route.model)
  })
}
