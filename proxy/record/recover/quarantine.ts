/**
 * What recovery keeps aside, under `<home>/quarantine/<ws>/<agent>/`: journal bytes no whole frame
 * accounts for (`damaged/<segment>@<offset>[-<NNN>].bin`, byte for byte, with a `.txt` saying what
 * they are; whole answer frames of a step whose send half is damaged too, the answer alone beside
 * them in `.answer`), and whole entries of an agent whose name can never be a branch (`<NNN>/` with the
 * step's files and `reason.txt`; older holdfast versions also put entries here they could not
 * commit), and `lost-<from>-<to>.txt` for steps a power cut took from a branch. Invariant: every
 * number named here counts as given out (`reservedUpTo`); nothing here
 * is removed until `holdfast recover` has committed it (to `agents/<agent>.recovered`, numbers
 * kept, so no live branch is renumbered).
 */
import fs from 'node:fs'
import path from 'node:path'
import { formatStep, parseStep } from '../../core/naming'
import { homePaths } from '../../store/home'
import type { Workspace } from '../../store/workspace'
import { FRAME } from '../journal/format'
import { type Damage, type JournalRead, scanFrames } from '../journal/reader'
import { journalFiles } from '../read'
import { REQUEST_FILE } from '../../core/layout'

/** A journal entry moved aside whole (its agent's name can never be a branch), and why. */
export interface Quarantined {
  agent: string
  step: string
  reason: string
}

/** Damaged journal bytes, copied aside. */
export interface KeptDamage extends Omit<Damage, 'file'> {
  agent: string
  file: string
  /** Where the bytes are now. */
  kept: string
}

const agentDir = (ws: Workspace, agent: string): string =>
  path.join(homePaths.quarantine(ws.home), ws.name, agent)

/** Copy damaged journal bytes aside (once: a later start finds them there), byte for byte. */
export function keepDamage(ws: Workspace, agent: string, read: JournalRead): KeptDamage[] {
  const kept: KeptDamage[] = []
  if (read.damage.length === 0) return kept
  const dir = path.join(agentDir(ws, agent), 'damaged')
  fs.mkdirSync(dir, { recursive: true })
  const data = new Map<string, Buffer>()
  for (const d of read.damage) {
    const step = d.step === undefined ? '' : `-${formatStep(d.step)}`
    const target = path.join(dir, `${path.basename(d.file, '.log')}@${d.offset}${step}.bin`)
    if (!fs.existsSync(target)) {
      let bytes = data.get(d.file)
      if (!bytes) data.set(d.file, (bytes = fs.readFileSync(d.file)))
      const region = bytes.subarray(d.offset, d.offset + d.length)
      fs.writeFileSync(`${target}.tmp`, region)
      fs.renameSync(`${target}.tmp`, target)
      const what =
        d.step === undefined ? 'no legible header' : `step ${formatStep(d.step)}, frame type ${d.type}`
      const unclaimed =
        d.kind === 'unclaimed' && d.step !== undefined ? answerOf(d.file, region, d.step) : undefined
      // The answer alone, beside its frames: what the client got, readable without the journal's format.
      if (unclaimed) fs.writeFileSync(target.replace(/\.bin$/, '.answer'), unclaimed)
      fs.writeFileSync(
        target.replace(/\.bin$/, '.txt'),
        d.kind === 'unclaimed'
          ? `${new Date().toISOString()} whole frames of ${d.file} at ${d.offset}, ${d.length} bytes, of step ${formatStep(d.step as number)}, whose send half is damaged; its answer's ${unclaimed?.length ?? 0} bytes are in ${path.basename(target, '.bin')}.answer\n`
          : `${new Date().toISOString()} ${d.kind} bytes of ${d.file} at ${d.offset}, ${d.length} bytes (${what})\n`,
      )
    }
    kept.push({ ...d, agent, kept: target })
  }
  return kept
}

/** The answer step `n`'s whole frames in `region` hold (its CHUNKs' bytes, in order). */
function answerOf(file: string, region: Buffer, n: number): Buffer {
  const chunks = scanFrames(file, region).frames.filter((f) => f.step === n && f.type === FRAME.CHUNK)
  return Buffer.concat(chunks.map((f) => f.payload))
}

/** Move an agent's whole journal aside (its name can never be a branch). */
export function quarantineAgent(
  ws: Workspace,
  agent: string,
  read: JournalRead,
  reason: string,
): Quarantined[] {
  const out: Quarantined[] = []
  const base = agentDir(ws, agent)
  for (const [n, s] of read.steps) {
    let target = path.join(base, formatStep(n))
    for (let k = 2; fs.existsSync(target); k++) target = path.join(base, `${formatStep(n)}.${k}`)
    fs.mkdirSync(target, { recursive: true })
    for (const [name, bytes] of Object.entries(journalFiles(s)))
      fs.writeFileSync(path.join(target, name), bytes)
    fs.writeFileSync(path.join(target, 'reason.txt'), `${new Date().toISOString()} ${reason}\n`)
    out.push({ agent, step: formatStep(n), reason })
  }
  fs.rmSync(path.join(ws.journalDir, agent), { recursive: true, force: true })
  return out
}

function names(dir: string): string[] {
  try {
    return fs.readdirSync(dir)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw err
  }
}

/**
 * Note that `agent`'s steps `from`..`to` were given out and lost (a power cut took the objects of
 * its branch's tip): `lost-<from>-<to>.txt`, so those numbers are never given again.
 */
export function reserveLost(ws: Workspace, agent: string, from: number, to: number, why: string): string {
  const base = agentDir(ws, agent)
  fs.mkdirSync(base, { recursive: true })
  const file = path.join(base, `lost-${formatStep(from)}-${formatStep(to)}.txt`)
  fs.writeFileSync(file, `${new Date().toISOString()} ${why}\n`, { flag: 'a' })
  return file
}

/** The highest step number the quarantine of `agent` names (0 when none): never given again. */
export function reservedUpTo(ws: Workspace, agent: string): number {
  let max = 0
  const base = agentDir(ws, agent)
  for (const name of names(base)) {
    const lost = /^lost-\d{3,}-(\d{3,})\.txt$/.exec(name)
    max = Math.max(max, parseStep(lost ? (lost[1] as string) : (name.split('.')[0] ?? '')) ?? 0)
  }
  for (const name of names(path.join(base, 'damaged'))) {
    const m = /-(\d{3,})\.bin$/.exec(name)
    max = Math.max(max, (m && parseStep(m[1] as string)) ?? 0)
  }
  return max
}

/** What a `lost-` file says of why (its first line, past the time), or what a cut of the branch says. */
function lostWhy(file: string): string {
  try {
    const line = fs.readFileSync(file, 'utf8').split('\n')[0] ?? ''
    const why = line.slice(line.indexOf(' ') + 1).trim()
    if (why) return why
  } catch {
    // unreadable: say what most lost- files say
  }
  return 'a power cut took it off the branch'
}

/** Why step `n` of `agent` has no record, from what the quarantine says of it. */
export function whyMissing(ws: Workspace, agent: string, n: number): string {
  const base = agentDir(ws, agent)
  const step = formatStep(n)
  const damaged = names(path.join(base, 'damaged'))
  const kept = damaged.find((name) => name.endsWith(`-${step}.bin`))
  if (kept) {
    const answer = damaged.find((name) => name.endsWith(`-${step}.answer`))
    const also = answer
      ? `; its answer's frames were whole and the answer is kept in ${path.join(base, 'damaged', answer)}`
      : ''
    return `its journal frame was damaged; the bytes are kept in ${path.join(base, 'damaged', kept)}${also}`
  }
  for (const name of names(base)) {
    const lost = /^lost-(\d{3,})-(\d{3,})\.txt$/.exec(name)
    if (lost && n >= (parseStep(lost[1] as string) ?? 0) && n <= (parseStep(lost[2] as string) ?? 0))
      return `${lostWhy(path.join(base, name))} (${path.join(base, name)})`
    if (name === step || name.startsWith(`${step}.`)) return `it is kept aside in ${path.join(base, name)}`
  }
  return 'no record of it was kept'
}

/** A whole entry waiting in quarantine: its directory, agent, number and files. */
export interface QuarantineEntry {
  dir: string
  agent: string
  n: number
  files: Record<string, Buffer>
}

/** The whole entries (`<NNN>[.k]/` with a request.json) of a workspace's quarantine, by agent and number. */
export function quarantineEntries(ws: Workspace): QuarantineEntry[] {
  const out: QuarantineEntry[] = []
  const root = path.join(homePaths.quarantine(ws.home), ws.name)
  for (const agent of names(root)) {
    for (const name of names(path.join(root, agent))) {
      const n = parseStep(name.split('.')[0] ?? '')
      const dir = path.join(root, agent, name)
      if (n === undefined || !fs.existsSync(path.join(dir, REQUEST_FILE))) continue
      const files: Record<string, Buffer> = {}
      for (const f of names(dir)) if (f !== 'reason.txt') files[f] = fs.readFileSync(path.join(dir, f))
      out.push({ dir, agent, n, files })
    }
  }
  return out.sort((a, b) => (a.agent < b.agent ? -1 : a.agent > b.agent ? 1 : a.n - b.n))
}
