/**
 * A request body read whole, once, and bounded three ways: in size (413 `BODY_TOO_LARGE`), in
 * silence (408 `REQUEST_TIMEOUT` once nothing arrived for `idleMs`) and in pace (408
 * `BODY_TOO_SLOW`: the body may take `idleMs` plus one second per `minRate` bytes received, so a
 * trickle of a byte every 20 s is cut however steady it is, while a large body at any usable speed
 * never meets the limit). An aborted `signal` (shutdown) ends it with `SHUTTING_DOWN`.
 * Invariant: a refused body is never half-used; reading stops and the answer closes the connection.
 */
import type http from 'node:http'
import { HoldfastError } from '../core/errors'

export interface BodyLimits {
  /** Largest body accepted, in bytes. */
  bytes: number
  /** Longest silence, in ms. */
  idleMs: number
  /** Slowest pace, in bytes per second, after the first `idleMs` (0: none). */
  minRate: number
}

export const BODY_IDLE_MS = 30_000
export const BODY_MIN_RATE = 1024

/** Read the whole body of `req` within `limits`. */
export function readBody(
  req: http.IncomingMessage,
  limits: BodyLimits,
  signal?: AbortSignal,
): Promise<Buffer> {
  const { bytes: limit, idleMs, minRate } = limits
  const declared = Number(req.headers['content-length'])
  if (Number.isFinite(declared) && declared > limit) {
    return Promise.reject(
      new HoldfastError(
        'BODY_TOO_LARGE',
        `the request body (${declared} bytes) is over the ${limit}-byte limit`,
      ),
    )
  }
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    let timer: NodeJS.Timeout | undefined
    const started = Date.now()
    const of = (): string => `${size} bytes received${Number.isFinite(declared) ? ` of ${declared}` : ''}`
    const done = (err: Error | undefined, body?: Buffer): void => {
      clearTimeout(timer)
      req.off('data', onData)
      req.off('end', onEnd)
      req.off('error', onError)
      signal?.removeEventListener('abort', onAbort)
      if (err) {
        req.pause() // nothing more is read; the answer closes the connection
        reject(err)
      } else resolve(body as Buffer)
    }
    const arm = (): void => {
      clearTimeout(timer)
      const now = Date.now()
      const idleAt = now + idleMs
      const paceAt = minRate > 0 ? started + idleMs + (size * 1000) / minRate : Infinity
      const slow = paceAt < idleAt
      timer = setTimeout(
        () =>
          done(
            slow
              ? new HoldfastError(
                  'BODY_TOO_SLOW',
                  `the request body arrived slower than ${minRate} bytes/s (${of()} in ${Date.now() - started} ms)`,
                )
              : new HoldfastError(
                  'REQUEST_TIMEOUT',
                  `the request body sent nothing for ${idleMs} ms (${of()})`,
                ),
          ),
        Math.max(0, Math.ceil((slow ? paceAt : idleAt) - now)),
      )
    }
    const onData = (chunk: Buffer): void => {
      size += chunk.length
      if (size > limit) {
        done(new HoldfastError('BODY_TOO_LARGE', `the request body is over the ${limit}-byte limit`))
        return
      }
      chunks.push(chunk)
      arm()
    }
    const onEnd = (): void =>
      done(undefined, chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size))
    const onError = (err: Error): void => done(err)
    const onAbort = (): void =>
      done(new HoldfastError('SHUTTING_DOWN', `holdfast is shutting down (${of()} of the request body)`))
    if (signal?.aborted) {
      onAbort()
      return
    }
    req.on('data', onData)
    req.on('end', onEnd)
    req.on('error', onError)
    signal?.addEventListener('abort', onAbort)
    arm()
  })
}
