/**
 * The journal tee: one recorded step's frames after its send half, written as its answer streams
 * (stages/forward calls it, record/journal/writer writes the frames). Invariant, stated once here:
 * SENT is in the journal before the request is sent; each piece of the answer is in it before the
 * client has that piece; and HEAD, the completion marker, is in it before the client can know the
 * answer is whole — with the last declared byte when the provider declared a length (in the same
 * write), else before the end. A kill at any moment then finds in the journal at least what the
 * client had, and HEAD only when the client could have had it all.
 * A piece the disk refuses does not stop the answer (the client still gets it): the copy stops,
 * `failure` says why, and `whole` stays false, so the answer's bytes travel to the commit instead.
 */
import type { ResponseHead } from './format'
import type { JournalEntry } from './writer'

/** What HEAD holds but its size (the tee counts that). */
export type Head = Omit<ResponseHead, 'bytes'>

export class JournalTee {
  private declared: number | undefined
  private delivered = 0
  private ended = false
  private headWritten = false
  /** Why the copy stopped; undefined while the journal takes every frame. */
  failure: Error | undefined

  constructor(
    private readonly entry: JournalEntry,
    /** Told once, when the first frame is refused (the caller logs it). */
    private readonly onFault: (err: Error) => void,
  ) {}

  /** The request is about to go: its SENT frame. Throws when it cannot be written (nothing may go). */
  sent(): void {
    this.entry.sent()
  }

  /** The provider's headers came: the answer's declared length, when it has one. */
  expect(declared: number | undefined): void {
    this.declared = declared
  }

  /**
   * A piece of the answer, before the client gets it; when it completes the declared length, HEAD
   * (made by `head`) goes with it in one write.
   */
  chunk(bytes: Buffer, head: () => Head): void {
    this.delivered += bytes.length
    const last = !this.ended && this.declared !== undefined && this.delivered >= this.declared
    if (last) this.ended = true
    this.write(() => {
      if (last) {
        this.entry.chunk(bytes, head())
        this.headWritten = true
      } else this.entry.chunk(bytes)
    })
  }

  /** The answer ended (before the client sees its end): HEAD, unless its last piece carried it. */
  end(head: () => Head): void {
    if (this.ended) return
    this.ended = true
    this.write(() => {
      this.entry.head(head())
      this.headWritten = true
    })
  }

  /** The whole answer and its HEAD are in the journal: the commit reads it there. */
  get whole(): boolean {
    return this.headWritten
  }

  private write(frames: () => void): void {
    if (this.failure) return
    try {
      frames()
    } catch (err) {
      this.failure = err as Error
      this.onFault(this.failure)
    }
  }
}
