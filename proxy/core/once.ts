/**
 * A value made on first use, then the same value every time (a memo of one thunk). Pure.
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
