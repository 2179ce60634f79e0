/**
 * The process logger: pino on stderr (stdout is for the one "listening" line and command output):
 * JSON lines, or one readable line per entry when stderr is a terminal (a person is watching).
 * Invariant: no request header, body or key is ever passed to it.
 */
import pino from 'pino'

export type Logger = pino.Logger

const LEVELS: Record<number, string> = {
  10: 'trace',
  20: 'debug',
  30: 'info',
  40: 'warn',
  50: 'error',
  60: 'fatal',
}

/** One JSON log entry as a person reads it: `HH:MM:SS level message key=value …`. */
export function readable(line: string): string {
  let e: Record<string, unknown>
  try {
    e = JSON.parse(line) as Record<string, unknown>
  } catch {
    return line
  }
  const { level, time, msg, pid: _pid, hostname: _host, name: _name, ...rest } = e
  const at = new Date(typeof time === 'number' ? time : Date.now()).toTimeString().slice(0, 8)
  const fields = Object.entries(rest)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ')
  const lvl = LEVELS[level as number] ?? String(level)
  return `${at} ${lvl.padEnd(5)} ${String(msg ?? '')}${fields ? `  ${fields}` : ''}\n`
}

export function createLogger(
  level = process.env.HOLDFAST_LOG_LEVEL ?? 'info',
  human = process.stderr.isTTY === true,
): Logger {
  const base = { level, base: { name: 'holdfast' } }
  if (!human) return pino(base, pino.destination({ dest: 2, sync: true }))
  return pino(base, { write: (line: string) => process.stderr.write(readable(line)) })
}

/** A logger that drops everything (tests, one-shot commands). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' })
}
