/**
 * The journal: `<home>/workspaces/<ws>/steps/<agent>/<NNN>/` holds each step's record before it
 * is committed. Invariant: `meta.json` (send half, with `request_bytes`) is written first and
 * `request.json` last, and nothing is sent before both are written: a step directory whose
 * `request.json` has `request_bytes` bytes is a complete record; any other was never sent.
 * Later writes replace files by temp file + rename. The answer streams into `response.part`
 * (created just before the send: its absence means the step was never sent) and
 * `response.head.json` (status, headers, byte count) is written before the answer's end reaches
 * the client; the finish half then writes `response.*` and the completed meta. The journal keeps
 * uncommitted steps and each agent's latest step.
 */
import fs from 'node:fs'
import fsp from 'node:fs/promises'
import path from 'node:path'
import type { StepMeta } from '../../generated/meta'
import { compareSteps, formatStep, parseStep } from '../core/naming'
import { writeFileAtomicSync } from '../store/atomic'

export type { StepMeta }

export const REQUEST_FILE = 'request.json'
/** The provider's answer as it streams, raw (still gzip/br when the provider sent it so). */
export const PART_FILE = 'response.part'
/** Written before the answer's end reaches the client: the answer is whole in PART_FILE. */
export const HEAD_FILE = 'response.head.json'
export const META_FILE = 'meta.json'
export const RESPONSE_FILES = ['response.json', 'response.sse', 'response.txt'] as const
export type ResponseFile = (typeof RESPONSE_FILES)[number]

/**
 * Write the send half: meta first, then the request bytes (the record is complete once they
 * land). Synchronous on purpose: it is on the request path, and two small sync writes cost less
 * than the async calls' thread-pool round trips.
 */
export function writeRecord(stepDir: string, request: Buffer, meta: StepMeta, fsync = false): void {
  fs.mkdirSync(stepDir, { recursive: true })
  // No temp files: until request.json holds request_bytes bytes, the directory is not a record.
  writeNew(path.join(stepDir, META_FILE), metaBytes(meta), fsync)
  writeNew(path.join(stepDir, REQUEST_FILE), request, fsync)
  if (fsync) syncDir(stepDir)
}

/** Create `file` (it must not exist) with `bytes`, flushed to the disk when `fsync`. */
function writeNew(file: string, bytes: Buffer, fsync: boolean): void {
  if (!fsync) return fs.writeFileSync(file, bytes, { flag: 'wx' })
  const fd = fs.openSync(file, 'wx')
  try {
    fs.writeSync(fd, bytes)
    fs.fsyncSync(fd)
  } finally {
    fs.closeSync(fd)
  }
}

function syncDir(dir: string): void {
  const fd = fs.openSync(dir, 'r')
  try {
    fs.fsyncSync(fd)
  } finally {
    fs.closeSync(fd)
  }
}

/** What `response.head.json` says: the answer is whole, with this status, headers and size. */
export interface ResponseHead {
  status: number
  headers: Record<string, string | string[] | undefined>
  trailers?: Record<string, string>
  bytes: number
  ttfb_ms: number | null
  total_ms: number
  ended_at: string
}

/**
 * The answer of one step on its way into the journal: `open` before the send (the marker that
 * it was sent), `write` each chunk before the client gets it, `complete` before the client gets
 * the end. Synchronous: a few small writes cost less than the thread pool's round trips, and a
 * chunk is on disk (in the page cache, or flushed with fsync) before the client has it.
 */
export class ResponseTee {
  private fd: number | undefined
  private size = 0

  constructor(
    private readonly stepDir: string,
    private readonly fsync: boolean,
  ) {}

  open(): void {
    this.fd = fs.openSync(path.join(this.stepDir, PART_FILE), 'wx')
  }

  write(chunk: Buffer): void {
    if (this.fd === undefined) return
    fs.writeSync(this.fd, chunk)
    this.size += chunk.length
  }

  /** The answer is whole: flush when asked and say so, before the end reaches the client. */
  complete(head: Omit<ResponseHead, 'bytes'>): void {
    if (this.fd !== undefined && this.fsync) fs.fsyncSync(this.fd)
    writeNew(
      path.join(this.stepDir, HEAD_FILE),
      Buffer.from(JSON.stringify({ ...head, bytes: this.size })),
      this.fsync,
    )
  }

  close(): void {
    if (this.fd === undefined) return
    fs.closeSync(this.fd)
    this.fd = undefined
  }
}

/** The completion marker of a step's answer, when it was written and reads back. */
export function readResponseHead(stepDir: string): ResponseHead | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(stepDir, HEAD_FILE), 'utf8')) as ResponseHead
  } catch {
    return undefined
  }
}

/**
 * The meta of a complete record, or undefined when the directory holds none (a crash mid-write
 * leaves no meta, no request.json, or a request.json shorter than `request_bytes`).
 */
export function completeRecordMeta(stepDir: string): StepMeta | undefined {
  const meta = readMetaSync(stepDir)
  const st = fs.statSync(path.join(stepDir, REQUEST_FILE), { throwIfNoEntry: false })
  return meta !== undefined && st !== undefined && st.isFile() && st.size === meta.request_bytes
    ? meta
    : undefined
}

/** Write the finish half: the response (when any), then the completed meta (run by the commit worker). */
export function finishRecord(
  stepDir: string,
  response: { file: ResponseFile; bytes: Buffer } | { file: ResponseFile; fromPart: true } | undefined,
  meta: StepMeta,
): void {
  const part = path.join(stepDir, PART_FILE)
  if (response && 'fromPart' in response) fs.renameSync(part, path.join(stepDir, response.file))
  else if (response) writeFileAtomicSync(path.join(stepDir, response.file), response.bytes)
  writeFileAtomicSync(path.join(stepDir, META_FILE), metaBytes(meta))
  // The streamed copy and its marker have served: the record now says it all.
  fs.rmSync(part, { force: true })
  fs.rmSync(path.join(stepDir, HEAD_FILE), { force: true })
}

export function metaBytes(meta: StepMeta): Buffer {
  return Buffer.from(JSON.stringify(meta, null, 2) + '\n')
}

/** The step numbers present in an agent's journal directory, ascending; [] when absent. */
export async function journalSteps(agentDir: string): Promise<number[]> {
  let names: string[]
  try {
    names = await fsp.readdir(agentDir)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw err
  }
  return names
    .filter((n) => parseStep(n) !== undefined)
    .sort(compareSteps)
    .map((n) => parseStep(n) as number)
}

/** Agent names with a journal directory in this workspace. */
export async function journalAgents(journalDir: string): Promise<string[]> {
  try {
    const entries = await fsp.readdir(journalDir, { withFileTypes: true })
    return entries.filter((e) => e.isDirectory()).map((e) => e.name)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw err
  }
}

export function readMetaSync(stepDir: string): StepMeta | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(stepDir, META_FILE), 'utf8')) as StepMeta
  } catch {
    return undefined
  }
}

/** Remove journal directories of committed steps, keeping the agent's latest recorded step. */
export async function pruneJournal(agentDir: string, committedUpTo: number): Promise<void> {
  const steps = await journalSteps(agentDir)
  const recorded = steps.filter((n) => fs.existsSync(path.join(agentDir, formatStep(n), REQUEST_FILE)))
  const latest = recorded[recorded.length - 1]
  for (const n of recorded) {
    if (n <= committedUpTo && n !== latest) {
      await fsp.rm(path.join(agentDir, formatStep(n)), { recursive: true, force: true })
    }
  }
}
