/**
 * The process logger: pino, JSON lines on stderr (stdout is for the one "listening" line and
 * command output). Invariant: no request header, body or key is ever passed to it.
 */
import pino from 'pino'

export type Logger = pino.Logger

export function createLogger(level = process.env.HOLDFAST_LOG_LEVEL ?? 'info'): Logger {
  return pino({ level, base: { name: 'holdfast' } }, pino.destination({ dest: 2, sync: true }))
}

/** A logger that drops everything (tests, one-shot commands). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' })
}
