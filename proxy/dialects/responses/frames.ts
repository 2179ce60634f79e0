/**
 * The Responses WebSocket's frames (the `responses_websockets=2026-02-06` beta Codex speaks): a
 * client sends `{"type":"response.create", …}` frames whose fields are a create request's, and a
 * frame that names `previous_response_id` carries only the items after that response's; the
 * provider answers each with the `response.*` events of a stream, one per message. Invariant: the
 * whole request of a frame is the conversation it continues (that response's input, then its
 * output items), then the frame's own input items, their bytes as sent; `type` and
 * `previous_response_id` are the socket's, not the request's, and a frame without `tools` keeps
 * the tools last declared. Pure.
 * https://developers.openai.com/api/docs/guides/websocket-mode
 */
import { isObject, type Json, type JsonObject } from '../../core/json'
import { applyEdits, jsonBytes } from '../../core/splice'
import { type ScannedTop, scanTopLevel, skipSpace, skipValue } from '../../core/json-scan'
import type { SocketConversation, SocketEvent, SocketFrames } from '../../core/dialect'

/** Terminal events: the answer is whole; the first two leave a response a later frame may continue. */
const KEPT = new Set(['response.completed', 'response.incomplete'])
const ENDED = new Set([...KEPT, 'response.failed', 'error'])
/** Events whose content the step needs: the response's id, its output items, its end. */
const READ = new Set(['response.created', 'response.output_item.done', ...ENDED])

/** The bytes of each element of the JSON array whose value spans `[start, end)` of `bytes`. */
export function arrayElements(bytes: Buffer, start: number, end: number): Buffer[] {
  const out: Buffer[] = []
  let i = skipSpace(bytes, start + 1)
  while (i < end && bytes[i] !== 0x5d) {
    const after = skipValue(bytes, i)
    out.push(bytes.subarray(i, after))
    i = skipSpace(bytes, after)
    if (bytes[i] === 0x2c) i = skipSpace(bytes, i + 1)
  }
  return out
}

/** The frame's input items and their bytes (a string input is one user message, re-encoded). */
function frameInput(frame: Buffer, top: ScannedTop, parsed: JsonObject): { items: Json[]; bytes: Buffer[] } {
  const input = parsed.input
  if (typeof input === 'string') {
    const item = { role: 'user', content: input }
    return { items: [item], bytes: [jsonBytes(item)] }
  }
  if (!Array.isArray(input)) return { items: [], bytes: [] }
  const span = top.keys.get('input')
  const bytes = span ? arrayElements(frame, span.valueStart, span.valueEnd) : input.map((i) => jsonBytes(i))
  return { items: input, bytes: bytes.length === input.length ? bytes : input.map((i) => jsonBytes(i)) }
}

const joinArray = (parts: readonly Buffer[]): Buffer => {
  const out: Buffer[] = [Buffer.from('[')]
  parts.forEach((p, i) => out.push(...(i > 0 ? [Buffer.from(','), p] : [p])))
  out.push(Buffer.from(']'))
  return Buffer.concat(out)
}

function wholeRequest(
  frame: Buffer,
  parsed: JsonObject,
  base: SocketConversation | undefined,
): ReturnType<SocketFrames['wholeRequest']> {
  const top = scanTopLevel(frame)
  if (!top.ok) throw new Error(`a frame that parsed is not an object: ${top.error}`)
  const own = frameInput(frame, top, parsed)
  const items = [...(base?.items ?? []), ...own.items]
  const itemBytes = [...(base?.itemBytes ?? []), ...own.bytes]
  const inherited = parsed.tools === undefined && base?.tools !== undefined
  const edits = [
    { key: 'type', value: undefined },
    { key: 'input', value: joinArray(itemBytes) },
    ...(parsed.previous_response_id !== undefined ? [{ key: 'previous_response_id', value: undefined }] : []),
    ...(inherited ? [{ key: 'tools', value: jsonBytes(base.tools as Json) }] : []),
  ].filter((e) => e.value !== undefined || top.keys.has(e.key))
  const { type: _type, previous_response_id: _chain, ...rest } = parsed
  const tools = inherited ? base.tools : parsed.tools
  const whole: JsonObject = { ...rest, input: items, ...(tools !== undefined ? { tools } : {}) }
  return {
    bytes: applyEdits(frame, top, edits),
    parsed: whole,
    conversation: { items, itemBytes, tools },
    frameItems: own.items.length,
  }
}

/** `"type":"…"` first in an object (as providers send events): read without parsing the event. */
const LEADING_TYPE = /^\s*\{\s*"type"\s*:\s*"([^"\\]{1,200})"/

export const responsesFrames: SocketFrames = {
  kindOf(frame) {
    if (frame.type === 'response.create') return frame.generate === false ? 'prewarm' : 'create'
    return frame.type === 'response.processed' ? 'processed' : 'other'
  },

  continues(frame) {
    return typeof frame.previous_response_id === 'string' ? frame.previous_response_id : undefined
  },

  wholeRequest,

  continued(conversation, output) {
    return {
      items: [...conversation.items, ...output],
      itemBytes: [...conversation.itemBytes, ...output.map((item) => jsonBytes(item))],
      tools: conversation.tools,
    }
  },

  eventType(event) {
    const head = LEADING_TYPE.exec(event.toString('utf8', 0, Math.min(event.length, 256)))
    if (head) return head[1]
    try {
      const v = JSON.parse(event.toString('utf8')) as Json
      return isObject(v) && typeof v.type === 'string' ? v.type : undefined
    } catch {
      return undefined
    }
  },

  eventOf(type, parse): SocketEvent {
    if (type === undefined || !READ.has(type)) return { kind: 'other' }
    const e = parse()
    if (!e) return { kind: 'other' }
    const response = isObject(e.response) ? e.response : undefined
    const id = typeof response?.id === 'string' ? response.id : undefined
    if (type === 'response.created') return { kind: 'started', id }
    if (type === 'response.output_item.done')
      return {
        kind: 'item',
        item: e.item ?? null,
        at: typeof e.output_index === 'number' ? e.output_index : undefined,
      }
    const status = type === 'error' ? (typeof e.status === 'number' ? e.status : 400) : 200
    const output = Array.isArray(response?.output) ? response.output : undefined
    return { kind: 'ended', id, output, kept: KEPT.has(type), status }
  },

  notFound(id) {
    return Buffer.from(
      JSON.stringify({
        type: 'error',
        status: 400,
        error: {
          type: 'invalid_request_error',
          code: 'previous_response_not_found',
          message: `Previous response with id '${id}' not found.`,
          param: 'previous_response_id',
        },
      }),
    )
  },

  inBandError(status, type, code, message) {
    return Buffer.from(JSON.stringify({ type: 'error', status, error: { type, code, message, param: null } }))
  },
}
