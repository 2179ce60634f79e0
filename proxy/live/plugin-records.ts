/**
 * What plugins may read of the records (plugins/api `RecordsView`): an agent's latest recorded
 * step — its number and its request headers as meta.json recorded them. Invariant: it only reads
 * (a workspace that does not exist is never created) and never throws: a name that is not usable,
 * an agent with no step, or a record that cannot be read reads as no step. Data: the journal and
 * the agent's branch, through proxy/record/read.
 */
import type { RecordedStep, RecordsView } from '../../plugins/api'
import { checkName, formatStep } from '../core/naming'
import { listSteps, readStepMeta } from '../record/read'
import type { Workspace } from '../store/workspace'

export function recordsView(workspace: (name: string) => Workspace): RecordsView {
  return {
    async latestStep(wsName: string, agent: string): Promise<RecordedStep | undefined> {
      if (checkName('workspace', wsName) !== undefined || checkName('agent', agent) !== undefined)
        return undefined
      try {
        const ws = workspace(wsName)
        if (!ws.exists()) return undefined
        const last = (await listSteps(ws, agent)).at(-1)
        if (!last) return undefined
        const meta = await readStepMeta(ws, agent, last.n)
        return Object.freeze({
          step: formatStep(last.n),
          headers: Object.freeze({ ...(meta?.request_headers ?? {}) }),
        })
      } catch {
        return undefined // a record that cannot be read back: as if none (the hold reports it)
      }
    },
  }
}
