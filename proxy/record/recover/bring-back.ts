/**
 * Bringing back what an older holdfast (or a name that could not be a branch) left whole in
 * quarantine: each entry committed onto `agents/<agent>.recovered` (`.recovered-2`, … for a number
 * already there), its number kept, then removed from the quarantine (it is in git). Invariant: a
 * live branch is never renumbered; an entry leaves the quarantine only once its commit landed.
 */
import fs from 'node:fs'
import { META_FILE } from '../../core/layout'
import { checkName } from '../../core/naming'
import type { Workspace } from '../../store/workspace'
import { commitSteps } from '../commit/step-commits'
import { quarantineEntries } from './quarantine'

/** What `recoverQuarantine` committed: each entry, and the branch it went to. */
export interface Brought {
  agent: string
  n: number
  to: string
}

/**
 * Commit the whole entries an older holdfast (or a name that could not be a branch) left in
 * quarantine: each onto `agents/<agent>.recovered` (`.recovered-2`, … for a number already there),
 * its number kept, then remove the entry (it is in git). A live branch is never renumbered.
 */
export async function recoverQuarantine(ws: Workspace): Promise<{ brought: Brought[]; refused: string[] }> {
  await ws.ensure()
  const brought: Brought[] = []
  const refused: string[] = []
  const targets = new Map<string, { name: string; last: number }[]>()
  const plan: { to: string; entry: ReturnType<typeof quarantineEntries>[number] }[] = []
  for (const entry of quarantineEntries(ws)) {
    let list = targets.get(entry.agent)
    if (!list) targets.set(entry.agent, (list = []))
    let target = list.find((t) => t.last < entry.n)
    for (let k = list.length + 1; !target; k++) {
      const name = `${entry.agent}.recovered${k === 1 ? '' : `-${k}`}`
      const bad = checkName('agent', name)
      if (bad) {
        refused.push(`${entry.dir}: ${bad}`)
        break
      }
      const t = { name, last: await ws.committedSteps(name) }
      list.push(t)
      if (t.last < entry.n) target = t
    }
    if (!target) continue
    target.last = entry.n
    plan.push({ to: target.name, entry })
  }
  const byTarget = new Map<string, typeof plan>()
  for (const p of plan) byTarget.set(p.to, [...(byTarget.get(p.to) ?? []), p])
  for (const [to, items] of byTarget) {
    const steps = items.map(({ entry }) => ({
      agent: to,
      n: entry.n,
      model: modelOf(entry.files),
      files: entry.files,
    }))
    const r = await commitSteps(ws.repo, steps, ws.options)
    const err = r.failed.get(to)
    if (err) {
      refused.push(`${to}: ${err.message}`)
      continue
    }
    for (const { entry } of items) {
      fs.rmSync(entry.dir, { recursive: true, force: true })
      brought.push({ agent: entry.agent, n: entry.n, to })
    }
  }
  return { brought, refused }
}

/** The model a quarantined entry's meta names, if it can be read. */
function modelOf(files: Record<string, Buffer>): string | null {
  try {
    const meta = JSON.parse(files[META_FILE]?.toString('utf8') ?? '{}') as { route?: { model?: unknown } }
    return typeof meta.route?.model === 'string' ? meta.route.model : null
  } catch {
    return null
  }
}
