/**
 * The attempt (DESIGN §9, seed 002): one fork of a conversation from a notch with a role, a goal
 * and skills, fired as one `dispatch` argv compatible with `litany dispatch`. Pure: the argv, its
 * parse, pin checks, the child id, and the child's first request. Invariant: the goal is passed
 * verbatim; an empty `--from` is refused (a fork without a ref is a different gesture).
 */
import { checkName, fitName } from './naming'

export const DISPATCH = 'dispatch'
const SKILLS_DIR = 'skills'
const SKILL_FILE = 'SKILL.md'

export interface DispatchArgs {
  role: string
  ws: string
  parent: string
  goal: string
  from: string
  pins: { dest: string; src: string }[]
}

/** One skill's pin: its destination mirrors the pool's own layout. */
export function skillPin(skill: string, home: string): { dest: string; src: string } {
  const problem = checkName('skill', skill)
  if (problem) throw new Error(problem)
  return {
    dest: `${SKILLS_DIR}/${skill}/${SKILL_FILE}`,
    src: `${home.replace(/\/+$/, '')}/${SKILLS_DIR}/${skill}/${SKILL_FILE}`,
  }
}

/** Exactly `dispatch <role> <ws> <parent> --goal <goal> --from <ref>` then `--pin <dest>=<src>` per pin, in order. */
export function dispatchArgv(a: DispatchArgs): string[] {
  if (a.from === '')
    throw new Error('--from is empty: an attempt forks from a ref (a notch commit or config/<name>)')
  const out = [DISPATCH, a.role, a.ws, a.parent, '--goal', a.goal, '--from', a.from]
  for (const p of a.pins) out.push('--pin', `${p.dest}=${p.src}`)
  return out
}

/** Read a dispatch argv back (the first word may be `dispatch` or absent); refusals are sentences. */
export function parseDispatchArgv(
  argv: readonly string[],
): { ok: true; args: DispatchArgs } | { ok: false; error: string } {
  const words = argv[0] === DISPATCH ? argv.slice(1) : [...argv]
  const positional: string[] = []
  let goal: string | undefined
  let from: string | undefined
  const pins: { dest: string; src: string }[] = []
  for (let i = 0; i < words.length; i++) {
    const w = words[i] as string
    const value = words[i + 1]
    if (w === '--goal' || w === '--from' || w === '--pin') {
      if (value === undefined) return { ok: false, error: `${w} needs a value` }
      i++
      if (w === '--goal') goal = value
      else if (w === '--from') from = value
      else {
        const eq = value.indexOf('=')
        if (eq <= 0 || eq === value.length - 1)
          return { ok: false, error: `--pin "${value}" is not <dest>=<src>` }
        pins.push({ dest: value.slice(0, eq), src: value.slice(eq + 1) })
      }
    } else if (w.startsWith('--')) return { ok: false, error: `unknown option ${w}` }
    else positional.push(w)
  }
  if (positional.length !== 3) return { ok: false, error: 'dispatch takes <role> <ws> <parent>' }
  if (goal === undefined || goal.trim() === '')
    return { ok: false, error: 'the goal is empty: say what this attempt is for (--goal)' }
  if (from === undefined || from === '')
    return { ok: false, error: '--from is empty: an attempt forks from a ref' }
  const [role, ws, parent] = positional as [string, string, string]
  return { ok: true, args: { role, ws, parent, goal, from, pins } }
}

const RESERVED = [/^goal\.md$/, /^steps(\/|$)/, /^\.holdfast(\/|$)/]

/** Pin destinations: relative, clean segments, not reserved, unique. Returns the first problem. */
export function checkPins(pins: readonly { dest: string; src: string }[]): string | undefined {
  const seen = new Set<string>()
  for (const { dest } of pins) {
    if (dest.startsWith('/')) return `pin destination "${dest}" must be relative`
    const parts = dest.split('/')
    if (
      parts.some(
        (p) =>
          p === '' ||
          p === '.' ||
          p === '..' ||
          p.toLowerCase() === '.git' ||
          p.includes('\0') ||
          p.includes('\\'),
      )
    ) {
      return `pin destination "${dest}" has an empty, ".", "..", ".git" or otherwise unusable segment`
    }
    if (RESERVED.some((r) => r.test(dest)))
      return `pin destination "${dest}" is reserved (goal.md, steps/…, .holdfast/…)`
    if (seen.has(dest)) return `pin destination "${dest}" is given twice`
    seen.add(dest)
  }
  return undefined
}

/** Whether an agent name is an attempt's (`childId`'s shape): its first step is a fork. */
export const isAttemptChild = (agent: string): boolean => /-\d{8}T\d{6}Z-[0-9a-z]{4}$/.test(agent)

/** `<parent>-<UTC compact timestamp>-<short random>`, e.g. `main-20261202T153000Z-k3f9`. */
export function childId(parent: string, now: Date, random: string): string {
  const ts = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')
  return fitName(`${parent}-${ts}-${random}`)
}
