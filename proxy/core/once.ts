/**
 * Made on first use: a value (`once`, a memo of one thunk) or a function to call every time
 * (`onFirstUse`). No state outside the closures they return.
 */
export function once<T>(make: () => T): () => T {
  let value: T | undefined
  let made = false
  return () => {
    if (!made) {
      value = make()
      made = true
    }
    return value as T
  }
}

/**
 * A function found at the first call (`find` gives it, or undefined where there is none), then
 * called on every call; undefined back where there is none. For what is costly to reach and may
 * never be needed (V8's gc, glibc's malloc_trim through an FFI).
 */
export function onFirstUse<R>(find: () => (() => R) | undefined): () => R | undefined {
  const found = once(find)
  return () => found()?.()
}
