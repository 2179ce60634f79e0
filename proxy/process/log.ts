/**
 * The process logger: pino on stderr (stdout is for the one "listening" line and command output):
 * JSON lines, or one readable line per entry when stderr is a terminal (a person is watching).
 * Invariant: no request header, body or key is ever passed to it. Invariant: logging never waits
 * on stderr's reader. Entries go through `process.stderr` (a pipe is written without blocking,
 * libuv keeps what the pipe cannot take yet); while more than LOG_BUFFER_BYTES wait there (a
 * reader that stalled), new entries are dropped and counted, and once the pipe drains one warn
 * line says how many. At shutdown `flushLogger` waits for what is buffered at most FLUSH_MS.
 */
import { noun } from '../core/saving-words'
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

/** Bytes of log entries held for a slow reader before new ones are dropped (a bound on memory). */
export const LOG_BUFFER_BYTES = 256 * 1024

/** How long `flushLogger` waits for a stalled reader at shutdown before giving up on the buffer. */
export const FLUSH_MS = 1000

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

/** What the destination writes to: a stream that buffers what its reader has not taken yet. */
export type LogOutput = Pick<NodeJS.WritableStream, 'write' | 'once' | 'on'> & {
  readonly writableLength: number
}

/**
 * A pino destination that never waits on its output: an entry is written while at most
 * `maxBytes` are buffered, else dropped and counted; when the output drains, `report` hears the
 * count (once per stall). An output that failed (EPIPE: the reader went away) drops everything.
 */
export class BoundedDestination {
  /** Entries dropped since the last report. */
  dropped = 0
  private waiting = false
  private broken = false
  /** Told the count once the output drained after a stall (createLogger: one warn entry). */
  report: (dropped: number) => void = () => {}

  constructor(
    private readonly out: LogOutput,
    private readonly maxBytes = LOG_BUFFER_BYTES,
    private readonly format: (line: string) => string = (line) => line,
  ) {
    out.on('error', () => {
      this.broken = true
    })
  }

  write(line: string): void {
    if (this.broken || this.out.writableLength > this.maxBytes) return this.drop()
    this.out.write(this.format(line))
  }

  private drop(): void {
    this.dropped++
    if (this.waiting || this.broken) return
    // More than a high-water mark is buffered, so the stream emits 'drain' once it is empty.
    this.waiting = true
    this.out.once('drain', () => {
      this.waiting = false
      this.say()
    })
  }

  private say(): void {
    const n = this.dropped
    if (n === 0 || this.broken) return
    this.dropped = 0
    this.report(n)
  }

  /**
   * Report a pending drop count if there is room, then wait until the output holds nothing more
   * (polled: a stream emits 'drain' only after a write it refused), at most `ms`. True when all
   * was handed to the output.
   */
  settle(ms = FLUSH_MS): Promise<boolean> {
    if (!this.broken && this.out.writableLength <= this.maxBytes) this.say()
    const until = Date.now() + ms
    return new Promise((resolve) => {
      const check = (): void => {
        if (this.broken) return resolve(false)
        if (this.out.writableLength === 0) return resolve(true)
        if (Date.now() >= until) return resolve(false)
        setTimeout(check, 10)
      }
      check()
    })
  }
}

const destinations = new WeakMap<Logger, BoundedDestination>()

export function createLogger(
  level = process.env.HOLDFAST_LOG_LEVEL ?? 'info',
  human = process.stderr.isTTY === true,
  out: LogOutput = process.stderr,
): Logger {
  const dest = new BoundedDestination(out, LOG_BUFFER_BYTES, human ? readable : undefined)
  const log = pino({ level, base: { name: 'holdfast' } }, dest)
  dest.report = (dropped) =>
    log.warn(
      { dropped },
      `the log reader stalled: ${dropped} ${noun(dropped, 'entry', 'entries')} ${noun(dropped, 'was', 'were')} dropped`,
    )
  destinations.set(log, dest)
  return log
}

/**
 * Hand what the logger buffered to stderr before the process exits, waiting at most `ms` for a
 * stalled reader (then what is left is lost: an exit is never held up by the log). True when all
 * of it was written.
 */
export function flushLogger(log: Logger, ms = FLUSH_MS): Promise<boolean> {
  return destinations.get(log)?.settle(ms) ?? Promise.resolve(true)
}

/** A logger that drops everything (tests, one-shot commands). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' })
}
