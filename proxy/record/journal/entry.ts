/**
 * One step's frames after its SEND (record/journal/writer writes SEND and makes this): SENT, each
 * CHUNK of the answer, HEAD. Invariant: `place` and `bytes` change only once a frame is written
 * whole, so a failed write leaves them as they were.
 */
import { FRAME, type Frame, type ResponseHead, type StepPlace } from './format'

/** One step's frames after SEND: SENT, each CHUNK, HEAD. Where they went is in `place`. */
export class JournalEntry {
  bytes = 0
  constructor(
    /** Appends frames to the step's journal file (`answer`: a CHUNK or HEAD, which may draw on the reserve). */
    private readonly write: (frames: readonly Frame[], answer: boolean) => number[],
    readonly n: number,
    readonly place: StepPlace,
  ) {}

  /** Just before the request goes upstream: a step without this frame was never sent. */
  sent(): void {
    this.write([{ type: FRAME.SENT, step: this.n, payload: [] }], false)
  }

  /**
   * A piece of the answer; with `head`, the answer is whole with it, and its HEAD goes in the same
   * write (a JSON answer of declared length is usually one piece: one write instead of two).
   */
  chunk(bytes: Buffer, head?: Omit<ResponseHead, 'bytes'>): void {
    const headBytes = head && this.headBytes(head, this.bytes + bytes.length)
    const frames: Frame[] = [{ type: FRAME.CHUNK, step: this.n, payload: [bytes] }]
    if (headBytes) frames.push({ type: FRAME.HEAD, step: this.n, payload: [headBytes] })
    const [offset, headAt] = this.write(frames, true) as [number, number?]
    this.bytes += bytes.length
    this.place.chunks.push({ offset, length: bytes.length })
    if (headBytes && headAt !== undefined) this.place.head = { offset: headAt, length: headBytes.length }
  }

  /** The answer is whole: say so (flushed when asked) before the end reaches the client. */
  head(h: Omit<ResponseHead, 'bytes'>): void {
    const bytes = this.headBytes(h, this.bytes)
    const offset = this.write([{ type: FRAME.HEAD, step: this.n, payload: [bytes] }], true)[0] as number
    this.place.head = { offset, length: bytes.length }
  }

  private headBytes(h: Omit<ResponseHead, 'bytes'>, bytes: number): Buffer {
    return Buffer.from(JSON.stringify({ ...h, bytes }))
  }
}
