/**
 * Fork from here: the step page's form (roles declared at the step's followed config, read there as
 * `holdfast roles` and the dispatcher read them, so the model shown is the model that will run; a
 * goal; skills from the pool) and its firing, which is `holdfast attempt`'s own (proxy/attempts:
 * fireCohort, each attempt an ops-log row). Invariant: the page answers once every attempt was
 * refused or has its child; the answers land on the cohort page as they are committed.
 */
import fs from 'node:fs'
import path from 'node:path'
import { type AttemptEvent, fireCohort } from '../attempts/fire'
import { formatStep } from '../core/naming'
import { type RolesReport, rolesAt } from '../report/roles'
import { notchCommit } from '../report/notch'
import type { HoldfastConfig } from '../store/config'
import type { ConfigReader } from '../store/config/lineage'
import type { Workspace } from '../store/workspace'
import { type Html, markup } from './html'

export interface ForkOptions {
  notch: string
  roles: RolesReport['roles']
  heading: string
  skills: string[]
}

/** The skills of the pool: `<home>/skills/<name>/SKILL.md`. */
export function skillsPool(home: string): string[] {
  try {
    return fs
      .readdirSync(path.join(home, 'skills'), { withFileTypes: true })
      .filter((e) => e.isDirectory() && fs.existsSync(path.join(home, 'skills', e.name, 'SKILL.md')))
      .map((e) => e.name)
      .sort()
  } catch {
    return [] // no pool yet
  }
}

/** What the form offers at a step, or why it cannot (pending, not answered, no readable config). */
export async function forkOptions(
  ws: Workspace,
  config: HoldfastConfig,
  agent: string,
  n: number,
  reader?: ConfigReader,
): Promise<ForkOptions | { refusal: string }> {
  const commit = await notchCommit(ws, agent, n)
  if (!commit) return { refusal: 'this step is not committed yet: a notch is a committed step' }
  try {
    const r = await rolesAt(ws, config.providers, commit, reader)
    return {
      notch: `${agent}@${formatStep(n)}`,
      roles: r.roles,
      heading: r.heading,
      skills: skillsPool(ws.home),
    }
  } catch (err) {
    return { refusal: (err as Error).message }
  }
}

export function forkForm(o: ForkOptions | { refusal: string }, action: string, formValue: string): Html {
  if ('refusal' in o)
    return markup`<h2>Fork from here</h2>
      <p class="muted">${o.refusal}</p>`
  if (o.roles.length === 0)
    return markup`<h2>Fork from here</h2>
      <p class="muted">
        No role is declared at this step's config (${o.heading}); declare one with
        <code>holdfast config set-role</code>.
      </p>`
  return markup`<h2>Fork from here</h2>
    <form class="fork" method="post" action="${action}">
      <input type="hidden" name="form" value="${formValue}" />
      <p class="muted">
        Roles at this step's config (${o.heading}); each checked role fires one attempt from ${o.notch}, as
        <code>holdfast attempt</code> does.
      </p>
      <fieldset>
        <legend>roles</legend>
        ${o.roles.map(
          (r) =>
            markup`<label
                ><input type="checkbox" name="role" value="${r.role}" /> <b>${r.role}</b> → ${r.provider} /
                <code>${r.model}</code
                >${r.row_declared ? '' : markup` <span class="bad">(row missing from holdfast.yaml)</span>`}</label
              ><br />`,
        )}
      </fieldset>
      ${
        o.skills.length
          ? markup`<fieldset>
              <legend>skills</legend>
              ${o.skills.map((s) => markup`<label><input type="checkbox" name="skill" value="${s}" /> ${s}</label> `)}
            </fieldset>`
          : ''
      }
      <label
        >goal<br /><textarea
          name="goal"
          required
          placeholder="what the attempts are for (the new user turn, verbatim)"
        ></textarea>
      </label>
      <p><button type="submit">Fire attempts</button></p>
    </form>`
}

export interface Fired {
  /** Per role: the child it made, or why it was refused. */
  outcomes: Map<string, { child?: string; refused?: string }>
  /** Settles when every attempt's first step has finished (the ops-log rows are written). */
  done: Promise<unknown>
}

/**
 * Fire one attempt per role from `<agent>@<NNN>`, as `holdfast attempt` does; resolves once every
 * role was refused or has its child, or `patienceMs` after the first child (a same-model attempt
 * waits for the first one's first byte before it is sent).
 */
export async function fireFork(
  home: string,
  config: HoldfastConfig,
  req: { ws: string; agent: string; n: number; roles: string[]; goal: string; skills: string[] },
  patienceMs = 3000,
): Promise<Fired> {
  const outcomes = new Map<string, { child?: string; refused?: string }>()
  let settle!: () => void
  const ready = new Promise<void>((r) => (settle = r))
  let timer: NodeJS.Timeout | undefined
  const onEvent = (e: AttemptEvent): void => {
    if (e.state === 'refused') outcomes.set(e.role, { refused: e.message })
    else if ('child' in e) outcomes.set(e.role, { child: e.child })
    if (outcomes.size >= req.roles.length) settle()
    else if ('child' in e) timer ??= setTimeout(settle, patienceMs)
  }
  const done = fireCohort(
    home,
    config,
    {
      ws: req.ws,
      from: `${req.agent}@${formatStep(req.n)}`,
      goal: req.goal,
      roles: req.roles,
      skills: req.skills,
    },
    'http',
    onEvent,
  ).catch((err: Error) => {
    for (const r of req.roles) if (!outcomes.has(r)) outcomes.set(r, { refused: err.message })
  })
  await Promise.race([ready, done])
  clearTimeout(timer)
  return { outcomes, done }
}

/** Refusals of recent Fork from here posts, by id, shown once on the cohort page they lead to. */
const firedNotes = new Map<string, string[]>()

/** Keep a post's refusals (the last hundred posts') under a new id, for the cohort page's `?fired=`. */
export function noteFired(notes: string[]): string {
  const id = Math.random().toString(36).slice(2, 10)
  firedNotes.set(id, notes)
  if (firedNotes.size > 100) firedNotes.delete(firedNotes.keys().next().value as string)
  return id
}

/** The refusals a post kept under `id` (`?fired=`), if any. */
export const firedRefusals = (id: string | null): string[] | undefined =>
  id ? firedNotes.get(id) : undefined
