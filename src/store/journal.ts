/**
 * The journal: `<home>/workspaces/<ws>/steps/<agent>/<NNN>/` holds each step's record before it
 * is committed. Invariant: `meta.json` (send half, with `request_bytes`) is written first and
 * `request.json` last, and nothing is sent before both are written: a step directory whose
 * `request.json` has `request_bytes` bytes is a complete record; any other was never sent.
 * Later writes replace files by temp file + rename. The journal keeps uncommitted steps and
 * each agent's latest step.
 */
import fs from 'node:fs'
import fsp from 'node:fs/promises'
import path from 'node:path'
import type { StepMeta } from '../generated/meta'
import { compareSteps, formatStep, parseStep } from '../core/naming'
import { writeFileAtomicSync } from './atomic'

export type { StepMeta }

export const REQUEST_FILE = 'request.json'
export const META_FILE = 'meta.json'
export const RESPONSE_FILES = ['response.json', 'response.sse', 'response.txt'] as const
export type ResponseFile = (typeof RESPONSE_FILES)[number]

/**
 * Write the send half: meta first, then the request bytes (the record is complete once they
 * land). Synchronous on purpose: it is on the request path, and two small sync writes cost less
 * than the async calls' thread-pool round trips.
 */
export function writeRecord(stepDir: string, request: Buffer, meta: StepMeta): void {
  fs.mkdirSync(stepDir, { recursive: true })
  // No temp files: until request.json holds request_bytes bytes, the directory is not a record.
  fs.writeFileSync(path.join(stepDir, META_FILE), metaBytes(meta), { flag: 'wx' })
  fs.writeFileSync(path.join(stepDir, REQUEST_FILE), request, { flag: 'wx' })
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
  response: { file: ResponseFile; bytes: Buffer } | undefined,
  meta: StepMeta,
): void {
  if (response) writeFileAtomicSync(path.join(stepDir, response.file), response.bytes)
  writeFileAtomicSync(path.join(stepDir, META_FILE), metaBytes(meta))
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
