/**
 * The frames of one journal file, and the bytes between them no whole frame accounts for. After a
 * bad frame the scan looks for the next legible header whose payload matches its CRC, so one
 * flipped byte costs the frame it is in, not the rest of the file. Pure: bytes in, frames and
 * damage out; an empty file has neither.
 */
import {
  couldBeHeaderStart,
  type FrameType,
  HEADER_BYTES,
  LEGACY_VERSION,
  payloadIntact,
  readHeader,
  VERSION,
} from './format'

/** Bytes of a journal file that no whole frame accounts for. */
export interface Damage {
  file: string
  offset: number
  length: number
  /**
   * 'torn': the file's last frame, cut short (a write that never finished); 'corrupt': anything
   * else no whole frame accounts for; 'unclaimed' (the reader's): whole frames of a step whose send
   * half is damaged or gone, from the first to the last in the file.
   */
  kind: 'torn' | 'corrupt' | 'unclaimed'
  /** What the region's first header names, when it is legible (the step is kept only when plausible). */
  step?: number
  type?: FrameType
}

export interface RawFrame {
  type: number
  step: number
  offset: number
  payload: Buffer
}

/**
 * The whole frames of a file, in order, and the damaged regions between them. After a bad frame
 * the reader looks for the next legible header whose payload matches its CRC, so one flipped byte
 * costs the frame it is in, not the rest of the file.
 */
export function scanFrames(file: string, data: Buffer): { frames: RawFrame[]; damage: Damage[] } {
  const frames: RawFrame[] = []
  const damage: Damage[] = []
  let at = 0
  while (at < data.length) {
    const h = readHeader(data, at)
    const start = at + HEADER_BYTES
    if (h && payloadIntact(data, h, start)) {
      frames.push({
        type: h.type,
        step: h.step,
        offset: start,
        payload: data.subarray(start, start + h.length),
      })
      at = start + h.length
      continue
    }
    const next = nextFrame(data, at + 1, h && start + h.length)
    const end = next ?? data.length
    // At the end of the file: a frame cut short, or zeros (a tail a power cut took before it was
    // flushed) is a write that never finished, not damage to what was written.
    const torn =
      next === undefined &&
      (h
        ? start + h.length > data.length
        : (data.length - at < HEADER_BYTES && couldBeHeaderStart(data, at)) || allZero(data, at))
    damage.push({
      file,
      offset: at,
      length: end - at,
      kind: torn ? 'torn' : 'corrupt',
      ...(h ? { step: h.step, type: h.type } : {}),
    })
    at = end
  }
  return { frames, damage }
}

/** Whether `data` holds only zeros from `from` to its end. */
function allZero(data: Buffer, from: number): boolean {
  for (let i = from; i < data.length; i++) if (data[i] !== 0) return false
  return true
}

/**
 * Where the next whole frame at or after `from` starts, if any. `likely` (where a legible but
 * damaged frame would end) is tried first: a flipped payload byte damages that frame alone.
 */
function nextFrame(data: Buffer, from: number, likely?: number): number | undefined {
  if (likely !== undefined && likely >= from && likely < data.length && wholeAt(data, likely)) return likely
  // A header's version byte and reserved zeros: the only positions worth checking a CRC at.
  let best: number | undefined
  for (const version of [VERSION, LEGACY_VERSION]) {
    const marker = Buffer.from([version, 0, 0])
    for (
      let i = data.indexOf(marker, from + 1);
      i !== -1 && (best === undefined || i - 1 < best);
      i = data.indexOf(marker, i + 1)
    ) {
      if (wholeAt(data, i - 1)) {
        best = i - 1
        break
      }
    }
  }
  return best
}

/** Whether a whole frame starts at `at`. */
function wholeAt(data: Buffer, at: number): boolean {
  const h = readHeader(data, at)
  return h !== undefined && payloadIntact(data, h, at + HEADER_BYTES)
}
