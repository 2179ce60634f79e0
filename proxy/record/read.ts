/**
 * Reading recorded steps for the CLI, the hold and attempts: committed steps from git
 * (`agents/<agent>` tree, or a notch commit's), pending ones from the journal. Invariant: a
 * committed step is read from its commit (the journal may still hold it, in part, for a moment);
 * a step is listed once, in numeric order.
 */
import fs from 'node:fs'
import { isObject, type JsonObject } from '../core/json'
import { formatStep, parseStep } from '../core/naming'
import type { StepMeta } from '../../generated/meta'
import { listDir, readFileAt, readRef, type Repo } from '../store/git'
import { type JournalStep, readJournal, segmentFiles } from './journal/reader'
import {
  FRAME_FILE,
  META_FILE,
  metaBytes,
  REQUEST_FILE,
  RESPONSE_FILES,
  responseFileFor,
  agentStepsPath,
  stepTreePath,
} from '../core/layout'
import type { Workspace } from '../store/workspace'

export interface StepRef {
  n: number
  committed: boolean
  /** Present in the journal (pending, or the agent's latest). */
  journal: boolean
}

/**
 * An agent's journal as read now (steps not committed yet, or whose journal file is not removed
 * yet), remembered while its files keep their sizes: a listing reads it once, not once per step.
 */
const journalMemo = new Map<string, { sizes: string; steps: Map<number, JournalStep> }>()
export function journalOf(ws: Workspace, agent: string): Map<number, JournalStep> {
  const dir = ws.agentJournal(agent)
  const files = segmentFiles(dir)
  const sizes = files
    .map((f) => `${f.file}:${fs.statSync(f.file, { throwIfNoEntry: false })?.size ?? 0}`)
    .join(',')
  const memo = journalMemo.get(dir)
  if (memo && memo.sizes === sizes) return memo.steps
  const { steps } = readJournal(dir)
  journalMemo.set(dir, { sizes, steps })
  return steps
}

/**
 * The files a journal step stands for: its request, its meta as far as it got (the send half,
 * with the answer's status once HEAD says it), and the answer's bytes as they came.
 */
export function journalFiles(step: JournalStep): Record<string, Buffer> {
  const files: Record<string, Buffer> = { [REQUEST_FILE]: step.request, [META_FILE]: metaBytes(step.meta) }
  if (step.wire) files[FRAME_FILE] = step.wire
  if (step.answer.length > 0) {
    // A WebSocket step's answer is its events, written as an event stream (docs/records.md).
    const type = step.meta.websocket ? 'text/event-stream' : String(step.head?.headers['content-type'] ?? '')
    files[responseFileFor(type)] = step.answer
  }
  return files
}

/** Every step of an agent, committed or pending, in numeric order. */
export async function listSteps(ws: Workspace, agent: string): Promise<StepRef[]> {
  const byN = new Map<number, StepRef>()
  const tip = await readRef(ws.repo, ws.branch(agent))
  if (tip) {
    for (const e of (await listDir(ws.repo, tip, agentStepsPath(agent))) ?? []) {
      const n = parseStep(e.name)
      if (n !== undefined && e.type === 'tree') byN.set(n, { n, committed: true, journal: false })
    }
  }
  for (const n of journalOf(ws, agent).keys()) {
    const known = byN.get(n)
    byN.set(n, { n, committed: known?.committed ?? false, journal: !known?.committed })
  }
  return [...byN.values()].sort((a, b) => a.n - b.n)
}

/** One file of a committed step, from the agent's branch; undefined when absent. */
export async function readCommittedFile(
  ws: Workspace,
  agent: string,
  n: number,
  file: string,
): Promise<Buffer | undefined> {
  const tip = await readRef(ws.repo, ws.branch(agent))
  if (!tip) return undefined
  return readFileAt(ws.repo, tip, `${stepTreePath(agent, n)}/${file}`)
}

/** What the committed step holds under `file`: a file, a directory in its place, or nothing. */
export async function committedKind(
  ws: Workspace,
  agent: string,
  n: number,
  file: string,
): Promise<'blob' | 'tree' | undefined> {
  const tip = await readRef(ws.repo, ws.branch(agent))
  if (!tip) return undefined
  const entry = ((await listDir(ws.repo, tip, stepTreePath(agent, n))) ?? []).find((e) => e.name === file)
  return entry?.type
}

/** One file of a step: the committed one, else what the journal holds of a pending step. */
export async function readStepFile(
  ws: Workspace,
  agent: string,
  n: number,
  file: string,
): Promise<Buffer | undefined> {
  const committed = await readCommittedFile(ws, agent, n, file)
  if (committed) return committed
  const pending = journalOf(ws, agent).get(n)
  return pending ? journalFiles(pending)[file] : undefined
}

/** A step's request.json, bytes and parsed; undefined when absent; throws when it is not a JSON object. */
export async function readStepRequest(
  ws: Workspace,
  agent: string,
  n: number,
): Promise<{ bytes: Buffer; body: JsonObject } | undefined> {
  const bytes = await readStepFile(ws, agent, n, REQUEST_FILE)
  if (!bytes) return undefined
  const v: unknown = JSON.parse(bytes.toString('utf8'))
  if (!isObject(v)) throw new Error(`step ${formatStep(n)}'s request.json is not a JSON object`)
  return { bytes, body: v }
}

export async function readStepMeta(ws: Workspace, agent: string, n: number): Promise<StepMeta | undefined> {
  const bytes = await readStepFile(ws, agent, n, META_FILE)
  if (!bytes) return undefined
  try {
    return JSON.parse(bytes.toString('utf8')) as StepMeta
  } catch (err) {
    throw new Error(
      `the meta.json of step ${formatStep(n)} of ${agent} is not JSON: ${(err as Error).message}`,
      { cause: err },
    )
  }
}

/** The recorded response of a step: which file, and its bytes. */
export async function readStepResponse(
  ws: Workspace,
  agent: string,
  n: number,
): Promise<{ file: string; bytes: Buffer } | undefined> {
  for (const file of RESPONSE_FILES) {
    const bytes = await readStepFile(ws, agent, n, file)
    if (bytes) return { file, bytes }
  }
  return undefined
}

export interface NotchStep {
  request: Buffer
  meta: StepMeta
  response: { file: string; bytes: Buffer } | undefined
}

/** The recorded files of the notch's own step, read at the notch commit. */
export async function readNotchStep(
  repo: Repo,
  commit: string,
  agent: string,
  n: number,
): Promise<NotchStep> {
  const dir = stepTreePath(agent, n)
  const request = await readFileAt(repo, commit, `${dir}/${REQUEST_FILE}`)
  const meta = await readFileAt(repo, commit, `${dir}/${META_FILE}`)
  if (!request || !meta)
    throw new Error(`step ${formatStep(n)} of ${agent} has no record at ${commit.slice(0, 8)}`)
  const names = new Set(((await listDir(repo, commit, dir)) ?? []).map((e) => e.name))
  let response: NotchStep['response']
  for (const file of RESPONSE_FILES) {
    if (!names.has(file)) continue
    const bytes = await readFileAt(repo, commit, `${dir}/${file}`)
    if (bytes) response = { file, bytes }
    break
  }
  return { request, meta: JSON.parse(meta.toString('utf8')) as StepMeta, response }
}
