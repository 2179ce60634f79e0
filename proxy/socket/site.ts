/**
 * What every frame of one client socket shares (the socket edge makes it at the upgrade): who it
 * is for, the upgrade's headers, the provider row its upstream socket was opened to, the 101 the
 * provider answered, and the conversations the socket holds, by the response that ended each.
 * Invariant: a conversation is held only by the socket whose upstream answered it, and only the
 * latest few (a client continues the last response it got; an older id reads as unknown, as the
 * provider's own socket cache does).
 */
import type { IncomingHttpHeaders } from 'node:http'
import type { Dialect, SocketConversation, SocketFrames } from '../core/dialect'
import type { Json, JsonObject } from '../core/json'
import { applyEdits, jsonBytes, toolsEdit, type Edit } from '../core/splice'
import { scanTopLevel } from '../core/json-scan'
import type { ProviderRow } from '../store/config'

export interface SocketSite {
  /** The socket's number in this serve (meta.json `websocket.socket`). */
  n: number
  dialect: Dialect
  frames: SocketFrames
  /** The path the client upgraded, prefix removed, query kept. */
  path: string
  /** As addressed (path prefix, `x-holdfast-*` headers, or the defaults). */
  workspace: string
  agent: string
  /** The upgrade's headers without the handshake's own and without holdfast's token. */
  headers: IncomingHttpHeaders
  tokenCarried: boolean
  /** The provider row the upstream socket is open to, its key and its http(s) URL for the path. */
  provider: string
  row: ProviderRow
  key: string | undefined
  url: URL
  /** The headers of the provider's 101 (meta.json `response_headers` of the socket's steps). */
  upgrade: Record<string, string | string[] | undefined>
}

/** Conversations a socket can continue: the latest first, at most KEPT. */
const KEPT = 8

export class Conversations {
  private readonly byId = new Map<string, SocketConversation>()

  get(id: string): SocketConversation | undefined {
    return this.byId.get(id)
  }

  set(id: string, c: SocketConversation): void {
    this.byId.delete(id)
    this.byId.set(id, c)
    for (const old of this.byId.keys()) {
      if (this.byId.size <= KEPT) break
      this.byId.delete(old)
    }
  }
}

/**
 * The frame to send for what the stages decided: the client's frame, with each top-level field the
 * stages changed in the whole request (compose's, the hold's, the history closure's) set to its new
 * value; the client's own bytes when nothing changed. `input` is never among them (nothing changes
 * the transcript), so the frame keeps carrying only its own items.
 */
export function frameFor(frame: Buffer, whole: JsonObject, held: JsonObject): Buffer {
  const edits: Edit[] = []
  for (const key of new Set([...Object.keys(whole), ...Object.keys(held)])) {
    if (key === 'input' || whole[key] === held[key]) continue
    const value = held[key]
    if (key === 'tools') edits.push(toolsEdit(Array.isArray(value) ? value : []))
    else edits.push({ key, value: value === undefined ? undefined : jsonBytes(value as Json) })
  }
  if (edits.length === 0) return frame
  const top = scanTopLevel(frame)
  if (!top.ok) throw new Error(`a frame that parsed does not scan: ${top.error}`)
  return applyEdits(frame, top, edits)
}
