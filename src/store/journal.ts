/**
 * The journal: `<home>/workspaces/<ws>/steps/<agent>/<NNN>/` holds each step's record before it
 * is committed. Invariant: `meta.json` (send half) is written first and `request.json` last, each
 * by temp file + rename, so a step directory with `request.json` is a complete record and one
 * without it was never sent. The journal keeps uncommitted steps and each agent's latest step.
 */
import fs from 'node:fs'
import fsp from 'node:fs/promises'
import path from 'node:path'
import type { StepMeta } from '../generated/meta'
import { compareSteps, formatStep, parseStep } from '../core/naming'
import { writeFileAtomic, writeFileAtomicSync } from './atomic'

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
  // meta.json needs no temp file: until request.json lands, the directory is not a record.
  fs.writeFileSync(path.join(stepDir, META_FILE), metaBytes(meta))
  writeFileAtomicSync(path.join(stepDir, REQUEST_FILE), request)
}

/**
 * Write the finish half: the response (when any), then the completed meta. Asynchronous: the
 * client already has its answer, and the event loop stays free for the next request.
 */
export async function finishRecord(
  stepDir: string,
  response: { file: ResponseFile; bytes: Buffer } | undefined,
  meta: StepMeta,
): Promise<void> {
  if (response) await writeFileAtomic(path.join(stepDir, response.file), response.bytes)
  await writeFileAtomic(path.join(stepDir, META_FILE), metaBytes(meta))
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

/** The files of one recorded step (name → bytes), temp files left by a crash excluded. */
export async function readStepFiles(stepDir: string): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>()
  for (const name of (await fsp.readdir(stepDir)).sort()) {
    if (name !== REQUEST_FILE && name !== META_FILE && !(RESPONSE_FILES as readonly string[]).includes(name))
      continue
    out.set(name, await fsp.readFile(path.join(stepDir, name)))
  }
  return out
}

export function readMetaSync(stepDir: string): StepMeta | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(stepDir, META_FILE), 'utf8')) as StepMeta
  } catch {
    return undefined
  }
}

/** Remove journal directories of committed steps, keeping the agent's latest step. */
export async function pruneJournal(agentDir: string, committedUpTo: number): Promise<void> {
  const steps = await journalSteps(agentDir)
  const latest = steps[steps.length - 1]
  for (const n of steps) {
    if (n <= committedUpTo && n !== latest) {
      await fsp.rm(path.join(agentDir, formatStep(n)), { recursive: true, force: true })
    }
  }
}
