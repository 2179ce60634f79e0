/**
 * What a recovery did (refs and packs set aside, orphan pack files removed, branches moved back, steps committed, waiting,
 * damaged, gaps, quarantined) and the lines it says of it to an operator (serve's log, `holdfast
 * recover`). Pure.
 */
import { noun } from '../../core/saving-words'
import { formatStep } from '../../core/naming'
import type { MovedPack, MovedRef, Rewound } from '../../store/git'
import type { KeptDamage, Quarantined } from './quarantine'

/** Steps of an agent that wait in its journal for a fault to pass. */
export interface Waiting {
  agent: string
  from: number
  to: number
  error: string
}

export interface Recovery {
  /** Loose refs a start found holding no object id, moved aside. */
  refs: MovedRef[]
  /** Packs a start found not whole, moved aside. */
  packs: MovedPack[]
  /** Pack files no index named (a kill's leftovers: temp files, a pack without its index), removed. */
  orphans: string[]
  /** Branches whose tip could not be read, moved back along their reflog. */
  rewound: Rewound[]
  committed: number
  waiting: Waiting[]
  damaged: KeptDamage[]
  /** Numbers given out whose record the journal lost (a damaged send half): never given again. */
  gaps: { agent: string; n: number }[]
  /** Numbers lost journal bytes may have held (a zeroed tail, an empty file), reserved in `kept`: never given again. */
  unrecorded: { agent: string; from: number; to: number; kept: string }[]
  quarantined: Quarantined[]
}

/** One line per thing recovery wants an operator to know (serve's log, `holdfast recover`). */
export function describeRecovery(ws: string, r: Recovery): { level: 'info' | 'warn'; line: string }[] {
  const lines: { level: 'info' | 'warn'; line: string }[] = []
  for (const x of r.refs)
    lines.push({ level: 'warn', line: `${ws}: ${x.ref} held no object id; moved aside to ${x.to}` })
  for (const p of r.packs)
    lines.push({ level: 'warn', line: `${ws}: pack ${p.name} moved aside to ${p.to}: ${p.reason}` })
  if (r.orphans.length > 0)
    lines.push({
      level: 'warn',
      line: `${ws}: removed ${r.orphans.length} orphan pack ${noun(r.orphans.length, 'file')}: ${r.orphans.join(', ')} (left by a process killed while it wrote or removed a pack; no index named them)`,
    })
  for (const b of r.rewound)
    lines.push({
      level: 'warn',
      line: `${ws}: ${b.reason}; ${b.to ? `moved back to ${b.to.slice(0, 12)}` : 'no earlier commit of it reads: the branch starts again (its old value is kept under damaged/refs/)'}${b.lost ? `, steps ${formatStep(b.lost.from)}..${formatStep(b.lost.to)} are no longer on it (the journal commits again those it still holds; their numbers are not given again)` : ''}`,
    })
  if (r.committed > 0)
    lines.push({ level: 'info', line: `${ws}: committed ${r.committed} step(s) from the journal` })
  for (const w of r.waiting)
    lines.push({
      level: 'warn',
      line: `${ws}/${w.agent}: steps ${formatStep(w.from)}..${formatStep(w.to)} wait in the journal (${w.error}); they are committed once the repository can be written (holdfast recover ${ws})`,
    })
  for (const g of r.gaps)
    lines.push({
      level: 'warn',
      line: `${ws}/${g.agent}: step ${formatStep(g.n)} was recorded but its journal frame is damaged; its number is not given again, its bytes are kept aside`,
    })
  for (const u of r.unrecorded)
    lines.push({
      level: 'warn',
      line: `${ws}/${u.agent}: steps ${formatStep(u.from)}..${formatStep(u.to)} may have been recorded in journal bytes a power cut or a crash zeroed or cut; there is no record of them, and their numbers are not given again (${u.kept})`,
    })
  for (const d of r.damaged)
    lines.push({
      level: 'warn',
      line:
        d.kind === 'unclaimed'
          ? `${ws}/${d.agent}: step ${formatStep(d.step as number)}'s answer frames are whole but its send half is damaged: they are kept at ${d.kept}, the answer alone in ${d.kept.replace(/\.bin$/, '.answer')}`
          : `${ws}/${d.agent}: ${d.length} ${d.kind} journal bytes kept at ${d.kept}`,
    })
  for (const q of r.quarantined)
    lines.push({ level: 'warn', line: `${ws}/${q.agent}: step ${q.step} moved aside: ${q.reason}` })
  return lines
}
