/**
 * A thread's scheduling priority, lowered: the commit worker's work (finish, deflate, SHA-1, packs,
 * refs) can wait a few milliseconds, the request path cannot. On a busy machine the kernel then
 * runs the server thread (and the agents and providers beside it) first and gives the worker what is
 * left, instead of splitting the cores evenly. Linux only: a thread has its own nice value there,
 * set through its thread id (`/proc/thread-self`); elsewhere a process has one, and lowering it
 * would slow the server too, so nothing is changed. Invariant: never raises a priority (a nice value
 * only goes up, which needs no privilege) and never throws.
 */
import fs from 'node:fs'
import os from 'node:os'

/** The commit worker's nice value by default (holdfast.yaml `limits.commit_worker_nice`). */
export const COMMIT_WORKER_NICE = 10

/**
 * Lower the calling thread to nice `nice` (0–19) on Linux: the nice value it has then (unchanged
 * when `nice` would raise it), or undefined where a thread's own cannot be set (not Linux, no /proc).
 */
export function lowerThisThread(
  nice: number,
  platform: NodeJS.Platform = process.platform,
): number | undefined {
  if (platform !== 'linux') return undefined
  try {
    // `<pid>/task/<tid>`, read from this thread: the link names the thread that reads it.
    const tid = Number(fs.readlinkSync('/proc/thread-self').split('/').pop())
    if (!Number.isSafeInteger(tid) || tid <= 0) return undefined
    const now = os.getPriority(tid)
    if (nice > now) os.setPriority(tid, Math.min(19, nice))
    return os.getPriority(tid)
  } catch {
    return undefined
  }
}
