/**
 * A promise-chain mutex: `run` calls execute one at a time, in call order; a failing one does not
 * stop the next. Pure (no I/O); the agent's critical section and the inline committer use it.
 */
export class Mutex {
  private tail: Promise<void> = Promise.resolve()
  run<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.tail.then(fn, fn)
    // The tail keeps no result: an idle agent's lock held its last step's request alive (its raw
    // and held bytes), once per agent that ever sent one (docs/performance.md).
    this.tail = next.then(
      () => undefined,
      () => undefined,
    )
    return next
  }
}
