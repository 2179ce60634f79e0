/**
 * accept (DESIGN §5.1): the body, read once (size-limited by the server), read as a request of its
 * dialect — nested at most MAX_NESTING deep, one JSON object, every field the proxy reads of the
 * right type, no repeated top-level key — or refused with a 400 that names the problem.
 * Invariant: the body is parsed once and scanned once; nothing downstream re-parses it.
 */
import type { IncomingHttpHeaders } from 'node:http'
import { randomUUID } from 'node:crypto'
import { HoldfastError } from '../core/errors'
import { sanitizeHeaders } from '../core/headers'
import type { JsonObject } from '../core/json'
import { readRequest } from '../core/record'
import { factsOf, type ReadFacts, readOnFacts } from '../core/incremental'
import { MAX_NESTING, scanTopLevel, type ScannedTop } from '../core/json-scan'
import type { Dialect } from '../core/dialect'
import type { RequestFacts } from '../../plugins/runner'
import type { ReadCache } from '../live/read-cache'

/** What the server hands over: the addressed endpoint, its request head, and a reader of its body. */
export interface Incoming {
  kind: 'step' | 'count_tokens'
  dialect: Dialect
  /** The path the client called, prefix removed, query kept. */
  path: string
  /** As addressed (path prefix, `x-holdfast-*` headers, or the defaults). */
  workspace: string
  agent: string
  headers: IncomingHttpHeaders
  /** The request carried holdfast's token (x-holdfast-token, or as its API key, removed from `headers`). */
  tokenCarried: boolean
  /** Reads the whole body (413 over the limit, 408 when it stalls or trickles). */
  body(): Promise<Buffer>
}

/** accept's value: the request as the client sent it. */
export interface Accepted {
  readonly id: string
  /** When the request was accepted (ms since the epoch): its span's start. */
  readonly acceptedAt: number
  readonly dialect: Dialect
  readonly kind: 'step' | 'count_tokens'
  /** The path the client called, prefix removed, query kept. */
  readonly path: string
  readonly headers: IncomingHttpHeaders
  /** The request carried holdfast's token: a row that adds the operator's key serves it (access.ts). */
  readonly tokenCarried: boolean
  /** The headers as meta.json records them (no auth, no x-holdfast-*), computed once on first use. */
  readonly recordedHeaders: () => Readonly<Record<string, string>>
  /** The client's body, exactly as received. */
  readonly raw: Buffer
  readonly parsed: JsonObject
  readonly top: ScannedTop
  /** What the plugins' view is made from. */
  readonly facts: RequestFacts
  /** This request's read facts, when the agents' read cache took them (the record numbers them). */
  readonly read?: ReadFacts
  /** The facts of the agent's request before, when the cache had them (telemetry's cause reads them). */
  readonly previousRead?: ReadFacts
}

/** The request the bytes hold, or a 400 (BAD_JSON, BAD_FIELD) in words that name the problem. */
export function parseBody(raw: Buffer, dialect: Dialect): { parsed: JsonObject; top: ScannedTop } {
  // Scanned first, so the parse of a large body reads its members without walking the top level
  // again; a parse error still takes precedence over a scan's refusal.
  const top = scanTopLevel(raw)
  const r = readRequest(raw, dialect, top.ok ? top : undefined)
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
  if (!top.ok) throw new HoldfastError('BAD_JSON', `the request body is refused: ${top.error}`)
  return { parsed: r.value, top }
}

/**
 * The request `raw` holds. With `reads`: read on the facts of the address's last request it shares
 * the longest prefix with, when it extends them (core/incremental: only the new tail is parsed),
 * and its own facts kept for the next.
 */
export function accept(incoming: Incoming, raw: Buffer, reads?: ReadCache): Accepted {
  if (!reads || incoming.kind !== 'step') return accepted(incoming, raw, parseBody(raw, incoming.dialect))
  const key = `${incoming.workspace}\0${incoming.agent}`
  const near = reads.nearest(key, raw)
  const prev = near?.facts
  const read = near && readOnFacts(near.facts, raw, incoming.dialect, near.shared)
  const body = read ?? parseBody(raw, incoming.dialect)
  const own = read ?? factsOf(raw, body.top, body.parsed, incoming.dialect)
  // The same conversation one step on takes the place of its last facts; another goes beside them.
  reads.keep(key, own, near?.continues ? prev : undefined)
  return { ...accepted(incoming, raw, body), read: own, ...(prev ? { previousRead: prev } : {}) }
}

/** A request read already (a WebSocket frame's whole conversation, proxy/socket) as accept's value. */
export function accepted(
  incoming: Omit<Incoming, 'body'>,
  raw: Buffer,
  { parsed, top }: { parsed: JsonObject; top: ScannedTop },
): Accepted {
  const { dialect, kind, path, headers } = incoming
  let clean: Readonly<Record<string, string>> | undefined
  const recordedHeaders = (): Readonly<Record<string, string>> =>
    (clean ??= Object.freeze(sanitizeHeaders(headers)))
  const id = randomUUID()
  return {
    id,
    acceptedAt: Date.now(),
    dialect,
    kind,
    path,
    headers,
    tokenCarried: incoming.tokenCarried,
    recordedHeaders,
    raw,
    parsed,
    top,
    facts: {
      id,
      dialect: dialect.name,
      kind,
      path,
      workspace: incoming.workspace,
      agent: incoming.agent,
      body: parsed,
      bytes: raw.length,
      headers: recordedHeaders,
    },
  }
}
