/**
 * A step's page as data (the view's step page and its export): the step's meta and request, `why`
 * as `holdfast why` says it (report/why), the structural diff against the previous step
 * (report/diff), the answer rebuilt from the recorded stream, and whether it is committed. Reads
 * the record through report/step-files. Invariant: a request that cannot be parsed is kept as a
 * fault to say, never a thrown page; a step with no meta or request is NotFound.
 */
import type { StepMeta } from '../../generated/meta'
import type { Dialect, Rebuilt } from '../core/dialect'
import { isObject, type JsonObject } from '../core/json'
import { META_FILE, REQUEST_FILE, RESPONSE_FILES } from '../core/layout'
import { formatStep } from '../core/naming'
import { dialectByName } from '../dialects'
import type { Workspace } from '../store/workspace'
import { type StepDiff, stepDiff } from './diff'
import { listSteps, NotFound, type StepRef } from './lookup'
import { directFiles, type StepFiles } from './step-files'
import { whyOf, type WhyReport } from './why'

export interface StepData {
  ws: string
  agent: string
  n: number
  meta: StepMeta
  why: WhyReport
  request: JsonObject | undefined
  /** Why the request could not be shown, when it could not. */
  requestFault: string | undefined
  dialect: Dialect
  previous: { n: number; request: JsonObject; meta: StepMeta } | undefined
  diff: StepDiff | null
  reply: Rebuilt | undefined
  responseFile: string | undefined
  committed: boolean
  last: number
}

function parsed(bytes: Buffer | undefined, what: string): JsonObject | undefined {
  if (!bytes) return undefined
  const v: unknown = JSON.parse(bytes.toString('utf8'))
  if (!isObject(v)) throw new Error(`${what} is not a JSON object`)
  return v
}

/**
 * A step's page data, each file read once (through `files`: one at a time for a page, by windows
 * for an export); `steps` (all of the agent's, when the caller has them) spares a listing.
 */
export async function stepData(
  ws: Workspace,
  agent: string,
  n: number,
  files: StepFiles = directFiles(ws, agent),
  steps?: readonly StepRef[],
): Promise<StepData> {
  const metaOf = async (k: number): Promise<StepMeta | undefined> => {
    const b = await files.file(k, META_FILE)
    return b && (JSON.parse(b.toString('utf8')) as StepMeta)
  }
  const meta = await metaOf(n)
  let request: JsonObject | undefined
  let requestFault: string | undefined
  try {
    request = parsed(await files.file(n, REQUEST_FILE), `step ${formatStep(n)}'s request.json`)
  } catch (err) {
    requestFault = (err as Error).message
  }
  if (!meta || (!request && !requestFault))
    throw new NotFound(`no step ${formatStep(n)} recorded for ${ws.name}/${agent}`)
  if (!request) throw new NotFound(requestFault as string)
  const dialect = dialectByName(meta.dialect)
  const prevMeta = n > 1 ? await metaOf(n - 1).catch(() => undefined) : undefined
  const prevBytes = n > 1 ? await files.file(n - 1, REQUEST_FILE) : undefined
  const report = whyOf({ n, meta, cur: request, prevMeta, prevBytes })
  let previous: StepData['previous']
  try {
    const pr = parsed(prevBytes, 'the previous request')
    if (prevMeta && pr) previous = { n: n - 1, request: pr, meta: prevMeta }
  } catch {
    previous = undefined // said by why (a record fault); nothing to diff against
  }
  const diff = previous
    ? stepDiff(dialect, previous.request, request, previous.meta.request_headers, meta.request_headers)
    : null
  let response: { file: string; bytes: Buffer } | undefined
  for (const file of RESPONSE_FILES) {
    const bytes = await files.file(n, file)
    if (bytes) {
      response = { file, bytes }
      break
    }
  }
  let reply: Rebuilt | undefined
  try {
    reply = response ? dialect.rebuildReply(response.bytes, response.file === 'response.sse') : undefined
  } catch {
    reply = undefined // an answer that cannot be rebuilt is still linked raw
  }
  const all = steps ?? (await listSteps(ws, agent))
  return {
    ws: ws.name,
    agent,
    n,
    meta,
    why: report,
    request,
    requestFault,
    dialect,
    previous,
    diff,
    reply,
    responseFile: response?.file,
    committed: all.find((s) => s.n === n)?.committed ?? false,
    last: all.length ? (all[all.length - 1] as StepRef).n : n,
  }
}
