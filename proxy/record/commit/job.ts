/**
 * What one step's commit carries from the server to the committer: where its record is in the
 * journal and either how to finish it (the forward's outcome: the committer decodes, reads usage,
 * prices) or its finished half already made (recovery, a step whose forward failed). One message
 * per step: the finish and the commit travel together. Invariant: the files a commit holds are
 * the request's exact bytes from the journal, the finished meta, and the answer as finished; a
 * finish that throws still commits the step, with the send half's meta and the answer raw.
 */
import type { StepPlace } from '../journal/format'
import { readEach } from '../journal/reader'
import { FRAME_FILE, META_FILE, metaBytes, REQUEST_FILE, RESPONSE_TEXT } from '../../core/layout'
import { answerBytes, type Finished, type FinishJob, finishStep, spanOf } from '../finish'
import { answeredMeta, type StepMeta } from '../meta'

export interface CommitJob {
  agent: string
  n: number
  model: string | null
  /** Where the step's send half (its meta and request) is in the journal. */
  request: StepPlace
  /** How the forward went: the committer finishes the step from it. */
  finish?: FinishJob
  /** The finished half, when it is made already (then `finish` is not used). */
  finished?: Finished
}

/** The job's finished half: given, or finished now; a finish that throws keeps the answer raw. */
export function finishedHalf(job: CommitJob): Finished {
  if (job.finished) return job.finished
  if (!job.finish) throw new Error(`step ${job.n} of ${job.agent} has neither a finish nor a finished half`)
  try {
    return finishStep(job.finish)
  } catch (err) {
    return fallbackFinished(job.finish, err)
  }
}

/** When finishing failed: the meta as the forward knew it, the error named, the answer's bytes as they came. */
function fallbackFinished(f: FinishJob, err: unknown): Finished {
  const place = f.place
  const sent =
    f.meta ??
    (JSON.parse(
      (readEach((place as StepPlace).file, [[(place as StepPlace).meta]])[0] as Buffer).toString('utf8'),
    ) as StepMeta)
  const answer =
    f.answer !== undefined
      ? f.answer
      : place && place.chunks.length > 0
        ? { file: place.file, extents: place.chunks }
        : null
  const answered = answeredMeta(sent, { ...f.answered, headers: f.answered.headers ?? {} })
  const meta: StepMeta = {
    ...answered,
    response_file: answer ? RESPONSE_TEXT : null,
    error: answered.error ?? {
      code: 'INTERNAL',
      message: `finishing this step failed: ${(err as Error)?.message ?? String(err)}`,
    },
  }
  const span = spanOf(f, meta)
  return { meta, response: answer ? { file: RESPONSE_TEXT, bytes: answer } : null, ...(span ? { span } : {}) }
}

/** A step's files as its commit holds them: request.json, meta.json, a WebSocket step's frame.json, and its response, if any. */
export function recordFiles(job: CommitJob, finished: Finished): Record<string, Buffer> {
  const r = finished.response
  const a = r?.bytes
  // The request and a journaled answer are in one file, read through one descriptor.
  const same = a !== undefined && 'file' in a && a.file === job.request.file
  const wire = job.request.wire
  const [request, frame, answer] = readEach(job.request.file, [
    [job.request.request],
    wire ? [wire] : [],
    ...(same ? [a.extents] : []),
  ])
  const files: Record<string, Buffer> = {
    [REQUEST_FILE]: request as Buffer,
    [META_FILE]: metaBytes(finished.meta),
  }
  if (wire) files[FRAME_FILE] = frame as Buffer
  if (r) files[r.file] = answer ?? answerBytes(r.bytes)
  return files
}
