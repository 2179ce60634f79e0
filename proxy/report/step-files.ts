/**
 * An agent's step files for a reader that goes through many steps in order (the export): committed
 * files are read a window of steps at a time (one `git ls-tree` for the agent, one
 * `git cat-file --batch` per window), pending ones from the journal. Invariant: a file read here is
 * what record/read's readStepFile reads for that step; at most one window is held in memory.
 */
import { formatStep } from '../core/naming'
import { readStepFile } from '../record/read'
import { readRef } from '../store/git'
import type { Workspace } from '../store/workspace'
import { catBlobs, lsFiles } from './blobs'
import { agentStepsPath } from '../core/layout'

export interface StepFiles {
  file(n: number, name: string): Promise<Buffer | undefined>
}

/** Files one at a time, as record/read reads them (a page of one step). */
export const directFiles = (ws: Workspace, agent: string): StepFiles => ({
  file: (n, name) => readStepFile(ws, agent, n, name),
})

/** Files read `window` steps at a time from the agent's tip as it is now. */
export function windowedFiles(ws: Workspace, agent: string, window = 64): StepFiles {
  let listing: Promise<Map<string, string> | undefined> | undefined
  let held: { from: number; to: number; blobs: Map<string, Buffer> } | undefined
  const list = (): Promise<Map<string, string> | undefined> =>
    (listing ??= readRef(ws.repo, ws.branch(agent)).then((tip) =>
      tip ? lsFiles(ws.repo.gitdir, tip, agentStepsPath(agent)).catch(() => undefined) : undefined,
    ))
  return {
    async file(n, name) {
      const files = await list()
      const oid = files?.get(`${formatStep(n)}/${name}`)
      if (!files || !oid) return readStepFile(ws, agent, n, name)
      if (!held || n < held.from || n >= held.to) {
        // The window starts one step back: a step page also reads its previous step.
        const from = Math.max(1, n - 1)
        const oids = [...files].filter(([p]) => {
          const s = Number(p.slice(0, p.indexOf('/')))
          return s >= from && s < from + window
        })
        held = {
          from,
          to: from + window,
          blobs: await catBlobs(
            ws.repo.gitdir,
            oids.map(([, o]) => o),
          ),
        }
      }
      return held.blobs.get(oid) ?? readStepFile(ws, agent, n, name)
    },
  }
}
