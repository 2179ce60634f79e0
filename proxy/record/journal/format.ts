/**
 * The journal's frame format (record/journal writes it, record/journal/reader reads it): a frame is
 * a 16-byte header — type, version, two reserved zero bytes, step (u32 LE), payload length (u32
 * LE), CRC-32 (u32 LE) — then the payload. Version 2 (written now) checks the header's first 12
 * bytes and the payload with its CRC, so a flipped bit in a step number or a length is caught;
 * version 1 (an older holdfast's journal, still read) checked the payload only. SEND's payload is the send half of
 * `meta.json` (its length as u32 LE, then its JSON) followed by the request bytes; WIRE's, when a
 * step has one (a WebSocket frame: its request is the whole conversation), the exact bytes sent
 * upstream; SENT's is empty; CHUNK's a piece of the answer; HEAD's the ResponseHead as JSON. Pure:
 * no files.
 */
import zlib from 'node:zlib'
import type { StepMeta } from '../../../generated/meta'

export type { StepMeta }

export const FRAME = { SEND: 1, SENT: 2, CHUNK: 3, HEAD: 4, WIRE: 5 } as const
export type FrameType = (typeof FRAME)[keyof typeof FRAME]
export const HEADER_BYTES = 16
/** The version written; the reader also reads LEGACY_VERSION. */
export const VERSION = 2
export const LEGACY_VERSION = 1
export interface Frame {
  type: FrameType
  step: number
  payload: readonly Buffer[]
}
/** A file past this size takes no new step (its steps' later frames still go to it). */
export const SEGMENT_BYTES = 8 * 1024 * 1024

/** Where some bytes are in a journal file. */
export interface Extent {
  offset: number
  length: number
}

/** What HEAD says: the answer is whole, with this status, headers and size. */
export interface ResponseHead {
  status: number
  headers: Record<string, string | string[] | undefined>
  trailers?: Record<string, string>
  bytes: number
  ttfb_ms: number | null
  total_ms: number
  ended_at: string
}

/** Where a step's parts are: the file, its send-half meta, the request, each chunk of the answer, and HEAD. */
export interface StepPlace {
  file: string
  meta: Extent
  request: Extent
  /** The exact bytes sent upstream, when they are not the request's (a WebSocket frame). */
  wire?: Extent
  chunks: Extent[]
  head?: Extent
}

/** A frame header as read: legible (version, type and reserved bytes right) or undefined. */
export interface FrameHeader {
  version: number
  type: FrameType
  step: number
  length: number
  crc: number
}

/** The header at `at` of `data`, when it is legible; it says nothing yet of its payload. */
export function readHeader(data: Buffer, at: number): FrameHeader | undefined {
  if (at + HEADER_BYTES > data.length) return undefined
  const type = data.readUInt8(at)
  const version = data.readUInt8(at + 1)
  if ((version !== VERSION && version !== LEGACY_VERSION) || data.readUInt16LE(at + 2) !== 0) return undefined
  if (type < FRAME.SEND || type > FRAME.WIRE) return undefined
  return {
    version,
    type: type as FrameType,
    step: data.readUInt32LE(at + 4),
    length: data.readUInt32LE(at + 8),
    crc: data.readUInt32LE(at + 12),
  }
}

/**
 * Whether the frame whose payload starts at `start` of `data` is all there and matches its CRC
 * (over its header's first 12 bytes too, from version 2 on).
 */
export function payloadIntact(data: Buffer, h: FrameHeader, start: number): boolean {
  if (start + h.length > data.length) return false
  const seed = h.version === LEGACY_VERSION ? 0 : zlib.crc32(data.subarray(start - HEADER_BYTES, start - 4))
  return zlib.crc32(data.subarray(start, start + h.length), seed) >>> 0 === h.crc
}

/** A frame's header bytes for `payload`. */
export function header(type: FrameType, step: number, payload: readonly Buffer[]): Buffer {
  let length = 0
  for (const p of payload) length += p.length
  const h = Buffer.allocUnsafe(HEADER_BYTES)
  h.writeUInt8(type, 0)
  h.writeUInt8(VERSION, 1)
  h.writeUInt16LE(0, 2)
  h.writeUInt32LE(step, 4)
  h.writeUInt32LE(length, 8)
  let crc = zlib.crc32(h.subarray(0, 12))
  for (const p of payload) crc = zlib.crc32(p, crc)
  h.writeUInt32LE(crc >>> 0, 12)
  return h
}

/** Whether `data` at `at` could be the start of a header cut short (what a torn last write leaves). */
export function couldBeHeaderStart(data: Buffer, at: number): boolean {
  const type = data[at]
  const version = data[at + 1]
  if (type === undefined || type < FRAME.SEND || type > FRAME.WIRE) return false
  return version === undefined || version === VERSION || version === LEGACY_VERSION
}
