/**
 * Reading recorded steps for the CLI and attempts: committed steps from git (`agents/<agent>`
 * tree, or a notch commit's), pending ones from the journal. Invariant: the journal copy of a
 * step wins when both exist (it is the newer one while a commit is pending); a step is listed
 * once, in numeric order.
 */
import fsp from 'node:fs/promises'
import path from 'node:path'
import { isObject, type JsonObject } from '../core/json'
import { formatStep, parseStep } from '../core/naming'
import type { StepMeta } from '../../generated/meta'
import { listDir, readFileAt } from '../store/git'
import { readRef } from '../store/git-refs'
import { agentRef, stepTreeDir } from '../store/home'
import { journalSteps, META_FILE, REQUEST_FILE, RESPONSE_FILES } from './journal'
import type { Repo } from '../store/git-repo'
import type { Workspace } from '../store/workspace'

export interface StepRef {
  n: number
  committed: boolean
  /** Present in the journal (pending, or the agent's latest). */
  journal: boolean
}

/** Every step of an agent, committed or pending, in numeric order. */
export async function listSteps(ws: Workspace, agent: string): Promise<StepRef[]> {
  const byN = new Map<number, StepRef>()
  const tip = await readRef(ws.repo, agentRef(agent))
  if (tip) {
    for (const e of (await listDir(ws.repo, tip, `steps/${agent}`)) ?? []) {
      const n = parseStep(e.name)
      if (n !== undefined && e.type === 'tree') byN.set(n, { n, committed: true, journal: false })
    }
  }
  for (const n of await journalSteps(ws.agentJournal(agent))) {
    try {
      await fsp.access(path.join(ws.stepDir(agent, n), REQUEST_FILE))
    } catch {
      // A step directory without request.json was never sent: not a step.
      continue
    }
    const known = byN.get(n)
    byN.set(n, { n, committed: known?.committed ?? false, journal: true })
  }
  return [...byN.values()].sort((a, b) => a.n - b.n)
}

/** One file of a step: the journal's copy, else the committed one; undefined when absent. */
export async function readStepFile(
  ws: Workspace,
  agent: string,
  n: number,
  file: string,
): Promise<Buffer | undefined> {
  try {
    return await fsp.readFile(path.join(ws.stepDir(agent, n), file))
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
  }
  const tip = await readRef(ws.repo, agentRef(agent))
  if (!tip) return undefined
  return readFileAt(ws.repo, tip, `${stepTreeDir(agent, n)}/${file}`)
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
  const dir = stepTreeDir(agent, n)
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
