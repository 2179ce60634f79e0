/**
 * Sending an attempt's first step through the running proxy, exactly as a client would
 * (`/w/<ws>/a/<child>` and the dialect's endpoint, routed by `x-holdfast-role`), and reporting its
 * progress: waiting, streaming (first byte), done or failed. Invariant: the proxy records and
 * commits the step; this module only reads the answer's stream to report on it.
 */
import http from 'node:http'
import { performance } from 'node:perf_hooks'
import type { Prepared } from './dispatch'

export type Progress =
  | { state: 'waiting' }
  | { state: 'streaming'; ttfbMs: number }
  | { state: 'done'; status: number; ms: number }
  | { state: 'failed'; status: number | null; message: string; ms: number }

export interface Submitted {
  /** Resolves when the first byte of the answer arrives (or the request failed). */
  firstByte: Promise<void>
  /** Resolves with the final state. */
  done: Promise<Progress>
}

export function submitFirstStep(
  p: Prepared,
  serverUrl: string,
  token: string | undefined,
  onProgress: (child: string, progress: Progress) => void = () => undefined,
): Submitted {
  const path = p.dialect.endpoint
  const url = new URL(
    `${serverUrl}/w/${encodeURIComponent(p.ws.name)}/a/${encodeURIComponent(p.child)}${path}`,
  )
  const headers: Record<string, string | number> = { ...p.headers, 'content-length': p.body.length }
  if (token) headers['x-holdfast-token'] = token
  const t0 = performance.now()
  let first!: () => void
  const firstByte = new Promise<void>((r) => (first = r))
  const done = new Promise<Progress>((resolve) => {
    onProgress(p.child, { state: 'waiting' })
    const req = http.request(url, { method: 'POST', headers }, (res) => {
      const status = res.statusCode ?? 0
      const chunks: Buffer[] = []
      let seen = false
      res.on('data', (c: Buffer) => {
        if (!seen) {
          seen = true
          first()
          onProgress(p.child, { state: 'streaming', ttfbMs: performance.now() - t0 })
        }
        if (status >= 400) chunks.push(c)
      })
      res.on('end', () => {
        first()
        const ms = performance.now() - t0
        const result: Progress =
          status < 400
            ? { state: 'done', status, ms }
            : { state: 'failed', status, message: errorMessage(Buffer.concat(chunks)), ms }
        onProgress(p.child, result)
        resolve(result)
      })
      res.on('error', (err) => {
        first()
        const result: Progress = { state: 'failed', status, message: err.message, ms: performance.now() - t0 }
        onProgress(p.child, result)
        resolve(result)
      })
    })
    req.on('error', (err) => {
      first()
      const result: Progress = {
        state: 'failed',
        status: null,
        message: err.message,
        ms: performance.now() - t0,
      }
      onProgress(p.child, result)
      resolve(result)
    })
    req.end(p.body)
  })
  return { firstByte, done }
}

/** The message of a dialect's error envelope, or the body's first line. */
function errorMessage(body: Buffer): string {
  const text = body.toString('utf8')
  try {
    const v = JSON.parse(text) as { error?: { message?: unknown } }
    if (typeof v.error?.message === 'string') return v.error.message
  } catch {
    // Not JSON: the first line says enough.
  }
  return text.split('\n')[0]?.slice(0, 200) ?? ''
}
