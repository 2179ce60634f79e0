/**
 * What a damaged journal still says (record/journal/reader asks): the status and headers of a HEAD
 * a torn last write cut short, and how many step numbers bytes no frame accounts for at a file's
 * end could have held. Invariant: a torn HEAD counts only when what is left of it parses as the
 * object it began (whole properties, cut between two); a count of numbers errs high, never low (a
 * number skipped shows as missing, a number given twice is two records under one name). Pure.
 */
import type { ResponseHead } from './format'

/** The fewest bytes a step's SEND frame takes when the journal shows none to measure (header, meta, request). */
export const MIN_SEND_BYTES = 256

/**
 * A HEAD whose payload `partial` a torn write cut short: its properties up to the last whole one,
 * when they hold the status and headers (HEAD's JSON writes them first); else undefined.
 */
export function repairHead(partial: Buffer): Omit<ResponseHead, 'bytes'> | undefined {
  const text = partial.toString('utf8')
  for (let at = text.lastIndexOf(','); at > 0; at = text.lastIndexOf(',', at - 1)) {
    let parsed: unknown
    try {
      parsed = JSON.parse(`${text.slice(0, at)}}`)
    } catch {
      continue
    }
    const h = parsed as Partial<ResponseHead>
    if (typeof h.status !== 'number' || typeof h.headers !== 'object' || h.headers === null) return undefined
    return {
      status: h.status,
      headers: h.headers,
      ...(h.trailers ? { trailers: h.trailers } : {}),
      ttfb_ms: typeof h.ttfb_ms === 'number' ? h.ttfb_ms : null,
      total_ms: typeof h.total_ms === 'number' ? h.total_ms : 0,
      ended_at: typeof h.ended_at === 'string' ? h.ended_at : new Date().toISOString(),
    }
  }
  return undefined
}

/**
 * Whether the answer's `bytes` are all the provider sent, by what a repaired HEAD says: HEAD is
 * written only once the answer ended, so it is whole unless a declared length says otherwise.
 */
export function wholeByHead(head: Omit<ResponseHead, 'bytes'>, bytes: number): boolean {
  const declared = Number(head.headers['content-length'])
  return !Number.isSafeInteger(declared) || declared === bytes
}

/**
 * The highest number `tail` bytes at a file's end could have given out after step `before`: one
 * step per `minSend` bytes begun (every step starts with a SEND frame at least that long).
 */
export function numbersIn(before: number, tail: number, minSend: number): number {
  return before + Math.ceil(tail / Math.max(1, minSend))
}
