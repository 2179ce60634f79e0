/**
 * A finished step as an OpenTelemetry GenAI span's facts (client inference: docs/telemetry.md):
 * its name, its times, its parent (the client's `traceparent`) and its attributes, as plain data.
 * Built where the finish is (the commit worker, or inline) from the finished meta and the little
 * the server read of the request (its sampling parameters, the accept time); the server thread
 * only hands the facts to the exporter. Invariant: no prompt or answer text unless `capture` is
 * set; never a header other than the trace context and a client-supplied conversation id (the
 * meta's request_headers carry no auth header to begin with); nothing here loads OpenTelemetry.
 */
import type { StepMeta } from '../../generated/meta'
import type { Json, JsonObject } from '../core/json'
import type { Rebuilt } from '../core/dialect'
import type { Cause } from '../core/cache-cause'
import type { PrefixMoves } from '../core/why'

export type AttributeValue = string | number | boolean | string[]

/** What the server asks of the span, sent with the step's finish when telemetry is on. */
export interface SpanAsk {
  capture: boolean
  semconv: 'stable' | 'latest'
  /** When the request was accepted (ms since the epoch): the span's start. */
  acceptedAt: number
  /** The sampling parameters the request sent (absent: not sent). */
  request: { max_tokens?: number; temperature?: number; top_p?: number; stream: boolean }
  /** What moved since the step before (stages/hold), when the server could tell cheaply: the cause reads it. */
  moves?: PrefixMoves
}

export interface SpanParent {
  traceId: string
  spanId: string
  /** The trace flags byte of the traceparent. */
  flags: number
  tracestate?: string
}

export interface SpanFacts {
  name: string
  startMs: number
  endMs: number
  parent: SpanParent | null
  attributes: Record<string, AttributeValue>
  /** The step failed: the span's status is an error with this message. */
  error: string | null
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/

/** A W3C `traceparent` header read, or null when it is not one (an invalid one is ignored, as the spec says). */
export function parseTraceparent(value: string | undefined, tracestate?: string): SpanParent | null {
  const m = TRACEPARENT.exec((value ?? '').trim().toLowerCase())
  if (!m) return null
  const [, version, traceId, spanId, flags, rest] = m as unknown as string[]
  if (version === 'ff' || (version === '00' && rest)) return null
  if (/^0+$/.test(traceId as string) || /^0+$/.test(spanId as string)) return null
  return {
    traceId: traceId as string,
    spanId: spanId as string,
    flags: parseInt(flags as string, 16),
    ...(tracestate ? { tracestate } : {}),
  }
}

/** The conversation id a client supplied (Claude Code's session header, Codex's session or thread id); never made up. */
export function conversationId(headers: Readonly<Record<string, string>>): string | undefined {
  for (const name of [
    'x-claude-code-session-id',
    'session-id',
    'session_id',
    'conversation_id',
    'thread_id',
  ]) {
    const v = headers[name]?.trim()
    if (v) return v
  }
  const meta = headers['x-codex-turn-metadata']
  if (!meta) return undefined
  try {
    const v = JSON.parse(meta) as Record<string, unknown>
    for (const k of ['thread_id', 'session_id', 'conversation_id'])
      if (typeof v[k] === 'string' && v[k]) return v[k] as string
  } catch {
    // not JSON: no id from it
  }
  return undefined
}

/** The request's sampling parameters, as the span records them (read on the server: four fields). */
export function requestParams(body: JsonObject): SpanAsk['request'] {
  const num = (k: string): number | undefined =>
    typeof body[k] === 'number' ? (body[k] as number) : undefined
  const max = num('max_tokens') ?? num('max_completion_tokens') ?? num('max_output_tokens')
  const temperature = num('temperature')
  const topP = num('top_p')
  return {
    ...(max !== undefined ? { max_tokens: max } : {}),
    ...(temperature !== undefined ? { temperature } : {}),
    ...(topP !== undefined ? { top_p: topP } : {}),
    stream: body.stream === true,
  }
}

/** What a step's span says of its content, when asked: the request's turns and the answer's. */
export interface SpanContent {
  request?: JsonObject
  reply?: Rebuilt
}

function contentAttributes(c: SpanContent, stop: string | null | undefined): Record<string, string> {
  const out: Record<string, string> = {}
  const r = c.request
  const input: Json | undefined = r?.messages ?? r?.input
  if (input !== undefined) out['gen_ai.input.messages'] = JSON.stringify(input)
  const system: Json | undefined = r?.system ?? r?.instructions
  if (system !== undefined) out['gen_ai.system_instructions'] = JSON.stringify(system)
  if (c.reply) {
    const parts = [
      ...(c.reply.text ? [{ type: 'text', content: c.reply.text }] : []),
      ...c.reply.toolCalls.map((t) => ({ type: 'tool_call', id: t.id, name: t.name })),
    ]
    out['gen_ai.output.messages'] = JSON.stringify([
      { role: 'assistant', parts, ...(stop ? { finish_reason: stop } : {}) },
    ])
  }
  return out
}

/** The upstream's host and port (the default port of its scheme when the URL names none). */
function server(url: string): Record<string, AttributeValue> {
  try {
    const u = new URL(url)
    const port = u.port
      ? Number(u.port)
      : u.protocol === 'https:'
        ? 443
        : u.protocol === 'http:'
          ? 80
          : undefined
    return { 'server.address': u.hostname, ...(port ? { 'server.port': port } : {}) }
  } catch {
    return {}
  }
}

/** What failed, in words a trace viewer shows: the meta's error code, else the outcome (an HTTP status for a provider's refusal). */
function errorType(m: StepMeta): string | null {
  if (m.error?.code) return m.error.code
  if (!m.outcome || m.outcome === 'ok') return null
  if (m.outcome === 'upstream_error' && typeof m.status === 'number') return String(m.status)
  return m.outcome
}

/** The span of finished step `m`; `provider`: its row family (`anthropic`, `openai`). */
export function spanFacts(
  m: StepMeta,
  provider: string,
  ask: SpanAsk,
  content?: SpanContent,
  /** The step's cause (core/cache-cause), when it could be told. */
  cause?: Cause,
): SpanFacts {
  const a: Record<string, AttributeValue> = {
    'gen_ai.operation.name': 'chat',
    'gen_ai.provider.name': provider,
  }
  const put = (k: string, v: AttributeValue | null | undefined): void => {
    if (v !== null && v !== undefined) a[k] = v
  }
  put('gen_ai.request.model', m.route.model)
  put('gen_ai.response.model', m.served_model)
  put('gen_ai.response.id', m.answer_id)
  if (m.stop_reason) a['gen_ai.response.finish_reasons'] = [m.stop_reason]
  put('gen_ai.request.max_tokens', ask.request.max_tokens)
  put('gen_ai.request.temperature', ask.request.temperature)
  put('gen_ai.request.top_p', ask.request.top_p)
  a['gen_ai.request.stream'] = ask.request.stream
  if (typeof m.ttfb_ms === 'number') a['gen_ai.response.time_to_first_chunk'] = m.ttfb_ms / 1000
  const u = m.usage
  if (u) {
    // meta's input_tokens are the uncached ones; the convention counts every input token.
    a['gen_ai.usage.input_tokens'] = u.input_tokens + u.cache_read_tokens + u.cache_write_tokens
    a['gen_ai.usage.output_tokens'] = u.output_tokens
    a['gen_ai.usage.cache_read.input_tokens'] = u.cache_read_tokens
    const write =
      ask.semconv === 'latest'
        ? 'gen_ai.usage.cache_write.input_tokens'
        : 'gen_ai.usage.cache_creation.input_tokens'
    a[write] = u.cache_write_tokens
  }
  put('gen_ai.conversation.id', conversationId(m.request_headers))
  Object.assign(a, server(m.route.url))
  const failed = errorType(m)
  put('error.type', failed)
  a['holdfast.workspace'] = m.workspace
  a['holdfast.agent'] = m.agent
  a['holdfast.step'] = m.step
  a['holdfast.hold'] = m.hold.applied ? 'held' : 'not-held'
  if (m.hold.held.length > 0) a['holdfast.hold.dropped'] = [...m.hold.held]
  put('holdfast.cost_usd', m.cost?.usd)
  put('holdfast.provider_cache.reason', m.provider_cache?.reason)
  put('holdfast.cause', cause)
  if (ask.capture && content) Object.assign(a, contentAttributes(content, m.stop_reason))
  const started = Number.isFinite(ask.acceptedAt) ? ask.acceptedAt : Date.parse(m.started_at)
  const ended = m.ended_at ? Date.parse(m.ended_at) : started + (m.total_ms ?? 0)
  return {
    name: m.route.model ? `chat ${m.route.model}` : 'chat',
    startMs: started,
    endMs: Math.max(started, Number.isFinite(ended) ? ended : started),
    parent: parseTraceparent(m.request_headers.traceparent, m.request_headers.tracestate),
    attributes: a,
    error: failed === null ? null : (m.error?.message ?? failed),
  }
}
