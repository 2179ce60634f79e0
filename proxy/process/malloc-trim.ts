/**
 * glibc's `malloc_trim(0)`: the memory malloc keeps after a burst, given back to the system.
 * Why: a freed large block (a request body, its journal copy, a pack) is not returned once glibc
 * has raised its mmap threshold; it stays resident between live blocks in malloc's heaps (the main
 * one and each thread's arena). `free` never returns the middle of a heap; `malloc_trim` does (it
 * advises the kernel that every free page in every arena can go). Run by the idle collector after
 * its collection, so `limits.idle_collect_ms: 0` turns it off too; health's `malloc_trim_ms` says
 * what it took. Reached through koffi (a maintained FFI with prebuilt binaries: no compiler at
 * install), loaded on first use: an idle proxy that never served a step never loads it. What it
 * gives back and costs, with the command: docs/performance.md.
 * Invariant: a no-op where there is no glibc (macOS, Windows, musl) or koffi cannot load — never
 * an error.
 */

/** `malloc_trim(0)` of this process (whether memory was given back), or undefined where there is none. */
export function mallocTrim(platform: NodeJS.Platform = process.platform): (() => boolean) | undefined {
  if (platform !== 'linux') return undefined
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const koffi = require('koffi') as typeof import('koffi')
    const trim = koffi.load('libc.so.6').func('int malloc_trim(size_t pad)') as (pad: number) => number
    return () => trim(0) === 1
  } catch {
    // No glibc (musl names its C library otherwise and has no malloc_trim), or no koffi build here.
    return undefined
  }
}
